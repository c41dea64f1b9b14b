#!/usr/bin/env bash
# End-to-end test of the schemata engine (--engine=schemata, the default for generated mutants)
# against a fixture repository, with testdata/fake_bazel_cc.sh as Bazel: it compiles the fixture
# with the system C++ compiler, so switches, the coverage run, the compile-error rounds and the
# fallback builds are all real. Checks each mutant's verdict and that the checkout is untouched.
set -uo pipefail

runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
check="$runfiles/mutation/check"
fake="$runfiles/mutation/testdata/fake_bazel_cc.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
repo="$tmp/repo"
cache="$tmp/cache"
export FAKE_STATE="$tmp/state"
export FAKE_BIN="$tmp/bin"
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

if ! command -v c++ >/dev/null; then
  echo "SKIP: no C++ compiler (c++) on PATH: the schemata engine test compiles its fixture"
  exit 0
fi

mkdir -p "$repo/lib" "$FAKE_STATE"
echo 'workspace(name = "fixture")' >"$repo/WORKSPACE"
: >"$repo/lib/BUILD"
cat >"$repo/lib/lib.h" <<'CC'
int Clamp(int x);
int Unused(int y);
unsigned Mode();
CC
cat >"$repo/lib/lib.cc" <<'CC'
#include "lib/lib.h"
struct Flags {
  unsigned mode : 3;
};
int Clamp(int x) {
  if (x > 10) return 10;
  return x;
}
int Unused(int y) {
  constexpr int kTwo = 2;
  return y * kTwo;
}
unsigned Mode() {
  Flags f{};
  f.mode = 5;
  return f.mode;
}
CC
cat >"$repo/lib/lib_test.cc" <<'CC'
#include <cstdio>
#include "lib/lib.h"
int main() {
  int bad = 0;
  if (Clamp(11) != 10) bad++;
  if (Clamp(3) != 3) bad++;
  if (Mode() == 0) bad++;
  std::printf("%d failures\n", bad);
  return bad == 0 ? 0 : 1;
}
CC
cat >"$repo/lib/posix_only.cc" <<'CC'
int PosixOnly(int x) { return x > 1 ? 2 : 3; }
CC
sha_before=$(cd "$repo" && find . -type f | sort | xargs sha256sum)

"$check" --repo="$repo" --cache-dir="$cache" --bazel="$fake" --roots=lib --generated-only \
  --test-jobs=2 >"$tmp/out" 2>"$tmp/err"
rc=$?
report="$cache/report/mutation.json"
status() {  # status ID -> the mutant's status in the report
  jq -r --arg id "$1" '.files[].mutants[] | select(.id == $id) | .status' "$report"
}
expect() {  # expect ID STATUS
  got=$(status "$1")
  [ "$got" = "$2" ] || fail "$1: $got, want $2"
}

[ "$rc" = 0 ] || [ "$rc" = 5 ] || fail "exit $rc, want 0 or 5"
[ -f "$report" ] || { fail "no report"; sed 's/^/  err: /' "$tmp/err" >&2; exit 1; }
# Switched and killed: the test sees Clamp(11).
expect "lib/lib.cc:6:NegateCondition:0" Killed
expect "lib/lib.cc:6:ConstantPlusOne:0" Killed
# Switched and survived: x >= 10 gives the same answers for 11 and 3 (an equivalent mutant).
expect "lib/lib.cc:6:RelationalOperator:0" Survived
# No test calls Unused. Its constexpr literal cannot be switched (it must stay a constant), so
# it falls back; the probe at the top of Unused shows no test enters it: NoCoverage, no build.
expect "lib/lib.cc:10:ConstantPlusOne:0" NoCoverage
jq -e '.files[].mutants[] | select(.id == "lib/lib.cc:10:ConstantPlusOne:0") | .statusReason | test("enters the function")' \
  "$report" >/dev/null || fail "the uncalled function's fallback was not judged by its probe"
# A bit-field width must be a constant: the switched line does not compile, the next round
# leaves it out, and the mutant gets a build of its own (a 4-bit field still holds 5: survives).
grep -q "schemata round 2" "$tmp/err" || fail "no second round after the bit-field error"
expect "lib/lib.cc:3:ConstantPlusOne:0" Survived
jq -e '.files[].mutants[] | select(.id == "lib/lib.cc:3:ConstantPlusOne:0") | .statusReason | test("built on its own")' \
  "$report" >/dev/null || fail "the bit-field mutant was not built on its own"
# f.mode = 5 -> 6 is seen by nobody (Mode() is only checked for != 0): a survivor.
expect "lib/lib.cc:15:ConstantPlusOne:0" Survived
# A file the configuration does not build is not judged (not a NoCoverage, not in the score).
expect "lib/posix_only.cc:1:RelationalOperator:0" Ignored
jq -e '.files["lib/posix_only.cc"].mutants[0].statusReason | test("not built in this configuration")' \
  "$report" >/dev/null || fail "the ignored file's reason"
# Mutated files build with warnings left as warnings; query never gets that build option.
grep '^build ' "$FAKE_STATE/calls" | grep -q -- '--per_file_copt=.*lib/lib\\.cc\$.*@-Wno-error' ||
  fail "the schema build lacks --per_file_copt=...@-Wno-error"
# The progress line counts survivors and uncovered mutants apart, as the report does.
last=$(grep '^mutant ' "$tmp/err" | tail -1)
want_survived=$(jq '[.files[].mutants[] | select(.status == "Survived")] | length' "$report")
want_nocov=$(jq '[.files[].mutants[] | select(.status == "NoCoverage")] | length' "$report")
grep -q "survived $want_survived, no coverage $want_nocov," <<<"$last" ||
  fail "progress: want survived $want_survived, no coverage $want_nocov in: $last"
# --resume of a finished run takes every verdict from the journal and builds nothing.
jq -S '[.files[].mutants[] | {id, status, killedBy}] | sort_by(.id)' "$report" >"$tmp/want"
: >"$FAKE_STATE/calls"
"$check" --repo="$repo" --cache-dir="$cache" --bazel="$fake" --roots=lib --generated-only \
  --test-jobs=2 --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 5 ] || fail "--resume: exit $rc, want 0 or 5"
grep -q -- '--resume: [0-9]* verdicts taken from .*; 0 mutants left to judge' "$tmp/err" ||
  fail "--resume: not every verdict was taken"
grep -q '^build ' "$FAKE_STATE/calls" && fail "--resume: built again"
jq -S '[.files[].mutants[] | {id, status, killedBy}] | sort_by(.id)' "$report" >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" || fail "--resume: the report differs from the first run's"
# The checkout is byte-identical.
sha_after=$(cd "$repo" && find . -type f | sort | xargs sha256sum)
[ "$sha_before" = "$sha_after" ] || fail "the checkout changed"

if [ "$failures" -gt 0 ]; then
  sed 's/^/  err: /' "$tmp/err" >&2
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "schemata engine: all checks passed"
