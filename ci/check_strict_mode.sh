#!/usr/bin/env bash
# Every CI script runs under bash with `set -euo pipefail`, so that no failure inside a pipeline or an
# unset variable is swallowed (seed 13.5.1, 13.8.3; ci/shell/pipefail_test.sh shows why bash: dash
# rejects pipefail). Checks every *.sh under ci/ and platforms/ and every file under .ci/ of ROOT
# (default: this repository) and names each file that breaks the rule.
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}

files=()
for dir in ci platforms; do
  [ -d "$root/$dir" ] || continue
  while IFS= read -r -d '' f; do files+=("$f"); done \
    < <(find -L "$root/$dir" -name 'bazel-*' -prune -o -type f -name '*.sh' -print0)
done
if [ -d "$root/.ci" ]; then
  while IFS= read -r -d '' f; do files+=("$f"); done < <(find -L "$root/.ci" -type f -print0)
fi
if [ "${#files[@]}" -eq 0 ]; then
  echo "strict-mode: no script found under $root (ci/, platforms/, .ci/)" >&2
  exit 1
fi

bad=0
for f in "${files[@]}"; do
  rel=${f#"$root"/}
  ok=1
  if ! head -n 1 "$f" | grep -Eq '^#!(/usr/bin/env bash|/bin/bash|/usr/bin/bash)([[:space:]]|$)'; then
    echo "strict-mode: $rel: first line must be a bash shebang (#!/usr/bin/env bash), got: $(head -n 1 "$f")" >&2
    bad=1; ok=0
  fi
  if ! grep -Eq '^[[:space:]]*set -euo pipefail([[:space:]]*(#.*)?)?$' "$f"; then
    echo "strict-mode: $rel: has no 'set -euo pipefail' line" >&2
    bad=1; ok=0
  fi
  if [ "$ok" = 1 ]; then echo "strict-mode: ok $rel"; fi
done
if [ "$bad" -ne 0 ]; then
  exit 1
fi
echo "strict-mode: ${#files[@]} scripts under ci/, platforms/, .ci/ start with a bash shebang and set -euo pipefail"
