#!/usr/bin/env bash
# A missing system library must stop the build with one line that names the package to install, not
# a linker error. Simulated in a scratch copy of the tree by asking pkg-config for a module that does
# not exist; the checkout itself is never modified.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=$(mktemp -d)
cleanup() {
  (cd "$scratch" && bazel shutdown >/dev/null 2>&1) || true
  rm -rf "$scratch"
}
trap cleanup EXIT

git ls-files -z | xargs -0 cp --parents -t "$scratch"
sed -i 's/targets = {"re2": \["re2"\]}/targets = {"re2": ["re2-not-installed"]}/' "$scratch/platforms/deps.bzl"
grep -q 're2-not-installed' "$scratch/platforms/deps.bzl"

set +e
out=$(cd "$scratch" && bazel build --noshow_progress @re2//:re2 2>&1)
rc=$?
set -e
if [ "$rc" -eq 0 ]; then
  echo "missing-library: the build passed with a missing library" >&2
  exit 1
fi
# Bazel echoes a failing repository rule inside a traceback; the line a user reads is the final
# "ERROR: <message>", and there must be exactly one.
lines=$(grep -c "^ERROR: missing system library 're2-not-installed'.*libre2-dev" <<<"$out" || true)
if [ "$lines" -ne 1 ]; then
  echo "missing-library: expected one line naming the library, got:" >&2
  echo "$out" >&2
  exit 1
fi
grep "^ERROR: missing system library" <<<"$out" | sed 's/^/missing-library: bazel said: /'
if grep -qi "undefined reference\|ld returned" <<<"$out"; then
  echo "missing-library: a linker error leaked through" >&2
  exit 1
fi
echo "missing-library: one line names the package to install"
