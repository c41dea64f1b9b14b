#!/usr/bin/env bash
# ci/check_strict_mode.sh must fail, naming the file, for each way a script can lose strict mode, and
# pass on the project's own scripts (the ones Bazel can see: ci/ and platforms/setup.sh).
set -euo pipefail
# Under `bazel test` the script runs as ci/<target>, so find the library in the runfiles tree;
# run by hand (bash ci/shell/x_test.sh) it sits next to this file.
repo_root=${TEST_SRCDIR:+$TEST_SRCDIR/$TEST_WORKSPACE}
repo_root=${repo_root:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=ci/shell/testlib.sh
source "$repo_root/ci/shell/testlib.sh"
checker="$repo_root/ci/check_strict_mode.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# make_tree NAME SHEBANG BODY: a fixture repository with one good script and one under test.
make_tree() {
  local dir=$tmp/$1
  mkdir -p "$dir/ci" "$dir/platforms" "$dir/.ci"
  printf '#!/usr/bin/env bash\nset -euo pipefail\necho good\n' >"$dir/ci/good.sh"
  printf '#!/usr/bin/env bash\nset -euo pipefail\n' >"$dir/.ci/run"
  printf '%s\n%s\necho x\n' "$2" "$3" >"$dir/platforms/under_test.sh"
  echo "$dir"
}

# check CASE SHEBANG BODY EXPECTED: EXPECTED is "pass" or the text the failure must contain.
check() {
  local name=$1 tree out status=0
  tree=$(make_tree "$name" "$2" "$3")
  out=$(bash "$checker" "$tree" 2>&1) || status=$?
  if [ "$4" = pass ]; then
    expect checker "$name: passes" 0 "$status"
  else
    expect checker "$name: fails" 1 "$status"
    expect_match checker "$name: names the file and the problem" "platforms/under_test.sh: .*$4" "$out"
  fi
}

check "strict script" '#!/usr/bin/env bash' 'set -euo pipefail' pass
check "strict script, /bin/bash" '#!/bin/bash' '  set -euo pipefail  # strict' pass
check "no set line" '#!/usr/bin/env bash' 'echo hi' "no 'set -euo pipefail'"
check "set -eu only" '#!/usr/bin/env bash' 'set -eu' "no 'set -euo pipefail'"
check "commented out" '#!/usr/bin/env bash' '# set -euo pipefail' "no 'set -euo pipefail'"
check "sh shebang" '#!/bin/sh' 'set -euo pipefail' "bash shebang"
check "no shebang" 'set -euo pipefail' 'true' "bash shebang"

# A file under .ci/ counts whatever its name.
tree=$(make_tree dotci '#!/usr/bin/env bash' 'set -euo pipefail')
printf '#!/usr/bin/env bash\necho no strict mode\n' >"$tree/.ci/run"
status=0; out=$(bash "$checker" "$tree" 2>&1) || status=$?
expect checker ".ci/run without strict mode: fails" 1 "$status"
expect_match checker ".ci/run without strict mode: named" "\.ci/run: " "$out"

# The project's own scripts visible in this test's runfiles.
status=0; out=$(bash "$checker" "$repo_root" 2>&1) || status=$?
printf '%s\n' "$out" | sed 's/^/      /'
expect checker "the project's scripts (ci/, platforms/ in runfiles) pass" 0 "$status"
finish
