#!/usr/bin/env bash
# Runs //ci:kernel_probe for each feature: verified passes, "unsupported" (exit 2) is a skip with
# the kernel's reason, anything else (a feature present but misbehaving) fails.
set -euo pipefail
repo_root=${TEST_SRCDIR:+$TEST_SRCDIR/$TEST_WORKSPACE}
repo_root=${repo_root:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=ci/shell/testlib.sh
source "$repo_root/ci/shell/testlib.sh"
probe="$repo_root/ci/kernel_probe"
[ -x "$probe" ] || probe="$repo_root/bazel-bin/ci/kernel_probe"

for feature in openat2 landlock seccomp; do
  status=0
  out=$("$probe" "$feature" 2>&1) || status=$?
  printf '%s\n' "$out" | sed 's/^/      /'
  case $status in
    0) expect probe "$feature verified" 0 "$status" ;;
    2) skip probe "$feature: $(printf '%s\n' "$out" | grep -m1 unsupported)" ;;
    *) expect probe "$feature verified" 0 "$status" ;;
  esac
done
status=0
"$probe" bogus >/dev/null 2>&1 || status=$?
expect probe "an unknown feature is a usage error (64)" 64 "$status"
finish
