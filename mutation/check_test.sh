#!/usr/bin/env bash
# End-to-end test of //mutation:check against a fixture repository, with testdata/fake_bazel.sh as
# Bazel (--bazel=PATH): no nested server, so it is fast. Checks exit codes, reports, that the
# checkout stays byte-identical, and that SIGTERM / SIGKILL mid-run leave it so and a rerun works.
set -uo pipefail

runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
check="$runfiles/mutation/check"
fake="$runfiles/mutation/testdata/fake_bazel.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
repo="$tmp/repo"
cache="$tmp/cache"
export FAKE_GOLDEN="$tmp/golden"
export FAKE_STATE="$tmp/state"
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

write_fixture() {
  rm -rf "$repo" "$FAKE_GOLDEN" "$FAKE_STATE"
  mkdir -p "$repo/lib" "$repo/mutation" "$FAKE_GOLDEN/lib" "$FAKE_STATE"
  : >"$repo/WORKSPACE"
  : >"$repo/lib/BUILD"
  cat >"$repo/lib/lib.cc" <<'CC'
#include "lib/lib.h"
// Clamps x to at most ten.
int Clamp(int x) {
  if (x > 10) return 10;
  return x;
}
bool Flag() { return true; }  // survivor
const char* Name() { return "a > b"; }
int Unused(int y) { return y + 1; }  // mutation: skip(fixture: an excluded line)
int Broken(int z) { return z * 2; }  // unviable
CC
  cp "$repo/lib/lib.cc" "$FAKE_GOLDEN/lib/lib.cc"
  catalog '"original": "if (x > 10)", "replacement": "if (x >= 10)"'
  if command -v git >/dev/null; then
    git -C "$repo" init -q
    git -C "$repo" add -A
    git -C "$repo" -c user.email=t@example.com -c user.name=t commit -qm fixture
  fi
}

# catalog 'ORIGINAL/REPLACEMENT JSON' [BREAK]: one curated entry.
catalog() {
  cat >"$repo/mutation/catalog.json" <<JSON
{"thresholds": {"high": 80, "low": 60, "break": ${2:-10}},
 "mutants": [{"id": "clamp-boundary", "file": "lib/lib.cc", $1,
              "boundary": "fixture: clamp", "why": "the clamp starts above ten"}]}
JSON
  if command -v git >/dev/null && [ -d "$repo/.git" ]; then
    git -C "$repo" -c user.email=t@example.com -c user.name=t commit -qam catalog >/dev/null || true
  fi
}

sums() { (cd "$repo" && find . -path ./.git -prune -o -type f -print | sort | xargs sha256sum); }

# The fake Bazel builds nothing, so generated mutants take the classic engine here; the schemata
# engine, which runs real test binaries, has its own end-to-end test (schemata_test.sh).
run() {
  "$check" --repo="$repo" --cache-dir="$cache" --bazel="$fake" --roots=lib --engine=classic "$@" \
    >"$tmp/out" 2>"$tmp/err"
  echo $?
}

expect_exit() {  # expect_exit WANT GOT WHAT
  if [ "$1" != "$2" ]; then
    fail "$3: exit $2, want $1"
    sed 's/^/  stdout: /' "$tmp/out" >&2
    sed 's/^/  stderr: /' "$tmp/err" >&2
  fi
}

assert_checkout_pristine() {
  if [ "$(sums)" != "$before" ]; then fail "$1: the checkout changed"; fi
  if command -v git >/dev/null && [ -n "$(git -C "$repo" status --porcelain)" ]; then
    fail "$1: git status is not empty: $(git -C "$repo" status --porcelain)"
  fi
}

write_fixture
before=$(sums)

# --list prints the mutants with stable ids and runs nothing.
expect_exit 0 "$(run --list)" "--list"
grep -q '^catalog:clamp-boundary' "$tmp/out" || fail "--list: no curated entry"
grep -q '^lib/lib.cc:4:RelationalOperator:0' "$tmp/out" || fail "--list: no relational mutant"
grep -q '^lib/lib.cc:9:' "$tmp/out" && fail "--list: the skip-marked line was mutated"
grep -q '^lib/lib.cc:2:' "$tmp/out" && fail "--list: the comment line was mutated"
[ -e "$FAKE_STATE/calls" ] && fail "--list ran bazel"

# A catalog kept outside the checkout (absolute path) works the same.
cp "$repo/mutation/catalog.json" "$tmp/outside.json"
expect_exit 0 "$(run --list --catalog="$tmp/outside.json")" "--catalog absolute"
grep -q '^catalog:clamp-boundary' "$tmp/out" || fail "--catalog absolute: no curated entry"

# Usage errors.
expect_exit 2 "$(run --shard=2/2)" "bad shard"
expect_exit 2 "$(run --bogus)" "unknown flag"
expect_exit 2 "$(run --files=nope)" "unknown --files"

# Catalog-only, the curated mutant is killed: exit 0, reports outside the checkout.
expect_exit 0 "$(run --catalog-only)" "catalog-only killed"
jq -e '.schemaVersion == "1" and (.files["lib/lib.cc"].mutants[0].status == "Killed")
       and (.files["lib/lib.cc"].mutants[0].killedBy == ["//lib:lib_test"])' \
  "$cache/report/mutation.json" >/dev/null || fail "catalog-only: JSON report"
grep -q 'Killed' "$cache/report/mutation.html" || fail "catalog-only: HTML report"
grep -q -- '--output_base=' "$FAKE_STATE/calls" || fail "nested bazel without its own output base"
grep -q '^shutdown' "$FAKE_STATE/calls" || fail "the scratch server was not shut down"
# Build and test share their configuration flags (else Bazel drops its analysis cache each time).
for flag in --nocache_test_results --notest_keep_going --test_env=GTEST_FAIL_FAST=1 --disk_cache=; do
  grep '^build ' "$FAKE_STATE/calls" | grep -q -- "$flag" || fail "build lacks $flag"
  grep '^test ' "$FAKE_STATE/calls" | grep -q -- "$flag" || fail "test lacks $flag"
done
assert_checkout_pristine "catalog-only"

# The catalog must follow the code: zero or two matches fail loudly before anything runs.
catalog '"original": "if (x > 11)", "replacement": "if (x >= 11)"'
before=$(sums)
rm -f "$FAKE_STATE/calls"
expect_exit 2 "$(run --catalog-only)" "stale catalog"
grep -q 'occurs 0 times' "$tmp/err" || fail "stale catalog: message"
[ -e "$FAKE_STATE/calls" ] && fail "stale catalog: bazel ran"
catalog '"original": "return ", "replacement": "return -"'
before=$(sums)
expect_exit 2 "$(run --catalog-only)" "ambiguous catalog"

# A curated survivor: exit 3, and the summary shows where, the diff and the tests that ran.
catalog '"original": "return true;", "replacement": "return false;"'
before=$(sums)
expect_exit 3 "$(run --catalog-only)" "curated survivor"
grep -q 'CURATED Survived: lib/lib.cc:7' "$tmp/out" || fail "survivor: no file:line"
grep -q '^    +bool Flag() { return false; }' "$tmp/out" || fail "survivor: no diff"
grep -q 'tests that ran: //lib:lib_test' "$tmp/out" || fail "survivor: no tests"
assert_checkout_pristine "curated survivor"

# Baseline failure refuses to start.
catalog '"original": "if (x > 10)", "replacement": "if (x >= 10)"'
before=$(sums)
FAKE_BASELINE_FAIL=1 expect_exit 4 "$(FAKE_BASELINE_FAIL=1 run --catalog-only)" "baseline"
grep -q 'refusing to start' "$tmp/err" || fail "baseline: message"

# Generated mutants: unviable ones are CompileError, the survivor counts against the score.
expect_exit 0 "$(run)" "full run"
jq -e '[.files["lib/lib.cc"].mutants[] | select(.status == "CompileError")] | length == 2' \
  "$cache/report/mutation.json" >/dev/null || fail "full run: unviable mutants"
jq -e '[.files["lib/lib.cc"].mutants[] | select(.status == "Survived")] | length == 1' \
  "$cache/report/mutation.json" >/dev/null || fail "full run: one survivor"
# --jobs=2: two scratch copies with two output bases, the same verdicts.
expect_exit 0 "$(run --jobs=2)" "two jobs"
jq -e '[.files["lib/lib.cc"].mutants[] | select(.status == "Killed")] | length == 7' \
  "$cache/report/mutation.json" >/dev/null || fail "two jobs: killed count"
[ -d "$cache/work-1/tree/lib" ] || fail "two jobs: no second scratch copy"
grep -q -- "--output_base=$cache/output-base-1" "$FAKE_STATE/calls" || fail "two jobs: one output base"
catalog '"original": "if (x > 10)", "replacement": "if (x >= 10)"' 95
before=$(sums)
expect_exit 5 "$(run)" "score below break"
expect_exit 0 "$(run --shard=0/3 --list)" "shard list"
n0=$(grep -c '^lib\|^catalog' "$tmp/out")
run --list >/dev/null
nall=$(grep -c '^lib\|^catalog' "$tmp/out")
[ "$n0" -lt "$nall" ] && [ "$n0" -gt 0 ] || fail "shard 0/3 selected $n0 of $nall"
assert_checkout_pristine "generated"

# --in-diff: only mutants on lines changed since the revision.
if command -v git >/dev/null; then
  sed -i 's/  return x;/  return x - 0;/' "$repo/lib/lib.cc"
  expect_exit 0 "$(run --in-diff=HEAD --list --generated-only)" "--in-diff"
  grep -v '^lib/lib.cc:5:' "$tmp/out" | grep -q '^lib/' && fail "--in-diff: mutants outside the change"
  grep -q '^lib/lib.cc:5:ConstantPlusOne:0' "$tmp/out" || fail "--in-diff: the changed line has no mutant"
  expect_exit 2 "$(run --in-diff=no-such-rev --list)" "--in-diff bad revision"
  git -C "$repo" checkout -q -- lib/lib.cc
fi

# SIGTERM mid-mutant: exit 143, the fake test's process group is gone, the checkout is untouched
# and the scratch copy is restored; a rerun works.
rm -f "$FAKE_STATE/sleeping"
FAKE_SLEEP=60 "$check" --repo="$repo" --cache-dir="$cache" --bazel="$fake" --catalog-only \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 200); do [ -s "$FAKE_STATE/sleeping" ] && break; sleep 0.05; done
[ -s "$FAKE_STATE/sleeping" ] || fail "SIGTERM: the mutant's test never started"
cmp -s "$cache/work-0/tree/lib/lib.cc" "$FAKE_GOLDEN/lib/lib.cc" &&
  fail "SIGTERM: the scratch copy is not mutated while the test runs"
kill -TERM "$pid"
wait "$pid"
expect_exit 143 "$?" "SIGTERM"
child=$(cat "$FAKE_STATE/sleeping")
kill -0 "$child" 2>/dev/null && fail "SIGTERM: the test process $child survived"
cmp -s "$cache/work-0/tree/lib/lib.cc" "$FAKE_GOLDEN/lib/lib.cc" ||
  fail "SIGTERM: the scratch copy was not restored"
[ -e "$cache/work-0/dirty" ] && fail "SIGTERM: dirty marker left behind"
assert_checkout_pristine "SIGTERM"
expect_exit 0 "$(run --catalog-only)" "rerun after SIGTERM"

# SIGKILL cannot be caught: the scratch copy stays mutated and marked dirty; the next run resyncs.
rm -f "$FAKE_STATE/sleeping"
FAKE_SLEEP=60 "$check" --repo="$repo" --cache-dir="$cache" --bazel="$fake" --catalog-only \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 200); do [ -s "$FAKE_STATE/sleeping" ] && break; sleep 0.05; done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
[ -e "$cache/work-0/dirty" ] || fail "SIGKILL: no dirty marker"
child=$(cat "$FAKE_STATE/sleeping")
for _ in $(seq 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.05; done
kill -0 "$child" 2>/dev/null && fail "SIGKILL: the test process outlived the runner"
assert_checkout_pristine "SIGKILL"
expect_exit 0 "$(run --catalog-only)" "rerun after SIGKILL"
grep -q 'left dirty by an interrupted run (lib/lib.cc); resynced' "$tmp/err" ||
  fail "SIGKILL: the rerun did not report the resync"
cmp -s "$cache/work-0/tree/lib/lib.cc" "$FAKE_GOLDEN/lib/lib.cc" || fail "SIGKILL: not resynced"

# An interrupted run keeps its verdicts in the journal; --resume judges only the rest, and its
# reports cover every mutant, as one uninterrupted run's do.
catalog '"original": "if (x > 10)", "replacement": "if (x >= 10)"'
before=$(sums)
rm -f "$FAKE_STATE/calls"
expect_exit 0 "$(run)" "full run before resume"
cp "$cache/report/mutation.json" "$tmp/uninterrupted.json"
all_tests=$(grep -c '^test ' "$FAKE_STATE/calls")
rm -f "$FAKE_STATE/sleeping" "$FAKE_STATE/mutant-tests" "$FAKE_STATE/calls"
FAKE_SLEEP=60 FAKE_SLEEP_FROM=3 "$check" --repo="$repo" --cache-dir="$cache" --bazel="$fake" \
  --roots=lib --engine=classic >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 200); do [ -s "$FAKE_STATE/sleeping" ] && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
expect_exit 143 "$?" "SIGTERM before resume"
grep -q '2 verdicts are kept in .*/journal/[0-9a-f]*\.jsonl; the same command with --resume' \
  "$tmp/err" || fail "interrupted: no word of the journal: $(cat "$tmp/err")"
first_tests=$(grep -c '^test ' "$FAKE_STATE/calls")
rm -f "$FAKE_STATE/calls"
expect_exit 0 "$(run --resume)" "resumed run"
grep -q -- '--resume: 2 verdicts taken from .*; [0-9]* mutants left to judge' "$tmp/err" ||
  fail "resume: no count of the verdicts taken: $(cat "$tmp/err")"
grep -q '2 taken from the journal of 1 earlier run' "$tmp/out" || fail "resume: summary line"
resumed_tests=$(grep -c '^test ' "$FAKE_STATE/calls")
# Baseline + the rest: the two judged mutants are not tested again, the interrupted one is.
[ "$resumed_tests" -eq $((all_tests - 2)) ] ||
  fail "resume: $resumed_tests bazel test calls, want $((all_tests - 2)) (first run made $first_tests)"
jq -S '[.files[].mutants[] | {id, status, killedBy}] | sort_by(.id)' "$tmp/uninterrupted.json" \
  >"$tmp/want"
jq -S '[.files[].mutants[] | {id, status, killedBy}] | sort_by(.id)' "$cache/report/mutation.json" \
  >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" || fail "resume: the report differs from an uninterrupted run's"
# A verdict never crosses a change: another catalog is another tree, and nothing is taken.
catalog '"original": "if (x > 10)", "replacement": "if (x >= 10)"' 11
expect_exit 0 "$(run --resume)" "resume after a change"
grep -q 'no journal of an earlier run of this exact tree' "$tmp/err" ||
  fail "resume after a change: verdicts were taken: $(cat "$tmp/err")"
# Nor across settings that change a verdict.
expect_exit 0 "$(run --resume --timeout-factor=4)" "resume with other settings"
grep -q 'no journal of an earlier run of this exact tree' "$tmp/err" ||
  fail "resume with another timeout: verdicts were taken"
before=$(sums)
assert_checkout_pristine "resume"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
