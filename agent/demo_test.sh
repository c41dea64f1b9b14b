#!/usr/bin/env bash
# End-to-end acceptance of the demo (seed 13.1.3, 13.8.3, 13.8.5) through the real binaries, with the
# seed's jq commands as printed. Usage (from Bazel): demo_test.sh RUN_DEMO TOOL
set -euo pipefail

run_demo=$1
tool=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@" >/dev/null; then echo "ok   $what"; else fail "$what"; fi
}
# Whether some line of FILE matches the jq FILTER. Not `jq -e 'select(FILTER)' FILE`: Debian 12's jq
# 1.6 sets -e's status from the LAST input line only (exit 4 when that line yields nothing), so a
# select over a multi-line trace fails unless the match is the last line (fixed in jq 1.7).
has_match() {  # has_match FILTER FILE
  local out
  out=$(jq -c "select($1)" "$2") && [ -n "$out" ]
}
# jq -e FILTER FILE for a file holding one JSON value, except that an empty FILE fails: jq 1.6
# exits 0 when it reads no input at all, so a command that printed nothing passed every check of
# its output (a mutant that refused --test-timeout-s=86400 survived that way).
jq_e() {  # jq_e FILTER FILE
  if [ ! -s "$2" ]; then
    echo "  $2 is empty" >&2
    return 1
  fi
  jq -e "$1" "$2"
}

command -v jq >/dev/null || { echo "demo_test: jq is required (apt-get install jq)" >&2; exit 1; }

# ---- good: done in 4 steps, trace >= 3 lines with an ok step ----
good_trace=$tmp/good.jsonl
set +e
"$run_demo" --mode=good --workspace="$tmp/good-ws" --trace="$good_trace" >"$tmp/good.out" 2>"$tmp/good.err"
rc=$?
set -e
cat "$tmp/good.out"
check "good exits 0" test "$rc" -eq 0
check "good: done in 4 steps" jq_e 'select(.stop_reason == "done" and .steps == 4 and .tool_calls == 4 and .trace_steps == 4)' "$tmp/good.out"
check "good: answer set" jq_e '.answer | type == "string"' "$tmp/good.out"
check "good: the summary is indented by two" grep -qx '  "stop_reason": "done",' "$tmp/good.out"
check "good: trace has >= 3 lines" test "$(wc -l <"$good_trace")" -ge 3
check "good: a step with ok == true" has_match '.result.ok == true' "$good_trace"
check "good: step 1 ok (seed 13.8.2)" test "$(jq -r 'select(.step == 1) | .result.ok' "$good_trace")" = true
check "good: calc.sh fixed on disk" grep -q 'echo $((a + b))' "$tmp/good-ws/calc.sh"
check "good: no isolation asked, none applied or missing" \
  has_match '.decision.tool == "test.run" and (.result.data.layers_in_force | length) == 4 and .result.data.layers_unavailable == []' "$good_trace"
check "good: stderr names the trace" grep -q "trace $good_trace" "$tmp/good.err"

# Every line parses and carries the run id and trace version; header first, footer last.
check "good: every line is JSON with run_id and trace_version" \
  jq -e -s 'all(.[]; (.run_id | type == "string") and .trace_version == 1)' "$good_trace"
check "good: one run_id" test "$(jq -r .run_id "$good_trace" | sort -u | wc -l)" -eq 1
check "good: header first" jq -e -s '.[0].type == "run_start" and .[0].policy == "scripted:good"' "$good_trace"
check "good: footer last" jq -e -s '.[-1].type == "run_end" and .[-1].stop_reason == "done"' "$good_trace"
check "good: decisions in order" test "$(jq -r 'select(.type == "step") | .decision.tool' "$good_trace" | tr '\n' ' ')" = "fs.read patch.apply test.run task.finish "
check "good: state.files has no .agent or .git" \
  jq -e -s '[.[] | select(.type == "step") | .state.files[]] | all(startswith(".agent") | not)' "$good_trace"
check "good: test.run passed with a log ref" \
  has_match '.decision.tool == "test.run" and .result.data.passed and (.result.refs[0].path | startswith(".agent/logs/"))' "$good_trace"

# The seed's three commands (13.7.2), verbatim. Command 1 over the whole file also counts the header
# and footer as "null" (documented in agent/trace.h); the step rows are exactly the seed's.
cmd1=$(jq -r '.decision.tool' "$good_trace" | sort | uniq -c | sort -nr)
echo "$cmd1"
check "seed cmd 1: header+footer show as 2 null" grep -Eq '^ +2 null$' <<<"$cmd1"
for t in fs.read patch.apply test.run task.finish; do
  check "seed cmd 1: 1 $t" grep -Eq "^ +1 $t\$" <<<"$cmd1"
done
cmd2=$(jq -r 'select(.result.ok == false) | [.step, .decision.tool, .result.error.code] | @tsv' "$good_trace")
check "seed cmd 2: no failed steps in good" test -z "$cmd2"
cmd3=$(jq -r '[.step, .budget_before.steps_left, .budget_before.tools_left] | @tsv' "$good_trace" | grep -v '^\s*$' || true)
check "seed cmd 3: budget curve 8..5" test "$(echo "$cmd3" | cut -f2 | tr '\n' ' ')" = "8 7 6 5 "

# ---- good with every kernel isolation layer asked for (each applied where this machine allows) ----
"$run_demo" --mode=good --isolate=all --workspace="$tmp/iso-ws" --trace="$tmp/iso.jsonl" >"$tmp/iso.out" 2>"$tmp/iso.err" || true
cat "$tmp/iso.out" "$tmp/iso.err"
check "good --isolate=all: done in 4 steps" jq_e 'select(.stop_reason == "done" and .steps == 4)' "$tmp/iso.out"
check "good --isolate=all: test.run names its layers" \
  has_match '.decision.tool == "test.run" and (.result.data.layers_in_force | index("rlimits") != null)' "$tmp/iso.jsonl"
# Every kernel layer asked for is either in force or named unavailable with its reason: more than
# the portable runner's four, whatever the machine.
check "good --isolate=all: kernel layers in force or named unavailable" \
  has_match '.decision.tool == "test.run" and ((.result.data.layers_in_force | length) > 4 or (.result.data.layers_unavailable | length) > 0)' "$tmp/iso.jsonl"

# ---- loop: no_progress after 3 steps with --max-steps 4; no_progress or max_steps with 5 ----
set +e
"$run_demo" --mode loop --max-steps 4 --workspace="$tmp/loop-ws" --trace="$tmp/loop.jsonl" >"$tmp/loop4.out" 2>/dev/null
rc=$?
set -e
cat "$tmp/loop4.out"
check "loop 4 exits 1" test "$rc" -eq 1
check "loop 4: no_progress after 3 steps" jq_e 'select(.stop_reason == "no_progress" and .steps == 3 and .trace_steps == 3)' "$tmp/loop4.out"
"$run_demo" --mode loop --max-steps 5 --workspace="$tmp/loop-ws" --trace="$tmp/loop5.jsonl" >"$tmp/loop5.out" 2>/dev/null || true
check "loop 5: no_progress or max_steps" jq_e 'select(.stop_reason == "no_progress" or .stop_reason == "max_steps")' "$tmp/loop5.out"
"$run_demo" --mode loop --max-steps 2 --workspace="$tmp/loop-ws" --trace="$tmp/loop2.jsonl" >"$tmp/loop2.out" 2>/dev/null || true
check "loop 2: max_steps before the brake" jq_e 'select(.stop_reason == "max_steps" and .steps == 2)' "$tmp/loop2.out"

# ---- escape: step 1 refused with EPERM; ends no_progress (3 identical refusals) ----
esc_trace=$tmp/escape.jsonl
"$run_demo" --mode escape --trace "$esc_trace" --workspace="$tmp/esc-ws" >"$tmp/escape.out" 2>/dev/null || true
cat "$tmp/escape.out"
check "escape: step 1 EPERM (seed 13.8.3)" has_match '.step == 1 and .result.ok == false and .result.error.code == "EPERM"' "$esc_trace"
check "escape: step 1 EPERM (brief)" has_match '.step == 1 and .result.error.code == "EPERM"' "$esc_trace"
check "escape: step 1 EPERM (jq 1.6-safe -e form)" jq -e -s 'any(.[]; .step == 1 and .result.error.code == "EPERM")' "$esc_trace"
check "escape: not retryable, stop" has_match '.step == 1 and .result.error.retryable == false and .result.error.suggested_action == "stop"' "$esc_trace"
check "escape: ends no_progress after 3 steps" jq_e 'select(.stop_reason == "no_progress" and .steps == 3)' "$tmp/escape.out"
cmd2=$(jq -r 'select(.result.ok == false) | [.step, .decision.tool, .result.error.code] | @tsv' "$esc_trace")
check "seed cmd 2 on escape: three EPERM rows" test "$(grep -c $'\tfs.read\tEPERM' <<<"$cmd2")" -eq 3

# The default workspace puts secret.txt next to it; escape must never have read it.
"$run_demo" --mode escape --trace "$tmp/escape-default.jsonl" >/dev/null 2>"$tmp/escape-default.err" || true
check "escape (default workspace): never read the secret" bash -c "! grep -q 'must never read' '$tmp/escape-default.jsonl'"
# The fresh directory it made is gone when the run ends, unless --keep-workspace.
fresh=$(sed -n 's|^run_demo: workspace \(.*\)/workspace (a fresh one, now removed.*|\1|p' "$tmp/escape-default.err")
check "default workspace: named as removed" test -n "$fresh"
check "default workspace: removed" test ! -e "${fresh:-/nonexistent}"
"$run_demo" --mode good --keep-workspace --trace "$tmp/keep.jsonl" >/dev/null 2>"$tmp/keep.err" || true
kept=$(sed -n 's|^run_demo: workspace \(.*\)/workspace$|\1|p' "$tmp/keep.err")
check "--keep-workspace: kept with its secret" test -f "${kept:-/nonexistent}/secret.txt"
check "--keep-workspace: kept the fixed calc.sh" grep -q 'a + b' "${kept:-/nonexistent}/workspace/calc.sh"
[ -n "$kept" ] && rm -rf "$kept"
# The fresh directory goes under $TMPDIR when it is set and not empty.
mkdir -p "$tmp/custom-tmp"
TMPDIR="$tmp/custom-tmp" "$run_demo" --mode good --keep-workspace --trace "$tmp/tmpdir.jsonl" \
  >/dev/null 2>"$tmp/tmpdir.err" || true
check "fresh workspace under \$TMPDIR" grep -q "^run_demo: workspace $tmp/custom-tmp/agent-demo-[^/]*/workspace$" "$tmp/tmpdir.err"
rm -rf "$tmp/custom-tmp"/agent-demo-*

# ---- appending: two runs in one file stay apart by run_id ----
"$run_demo" --mode=loop --max-steps=1 --workspace="$tmp/loop-ws" --trace="$tmp/two.jsonl" >/dev/null 2>&1 || true
"$run_demo" --mode=loop --max-steps=1 --workspace="$tmp/loop-ws" --trace="$tmp/two.jsonl" --append-trace >/dev/null 2>&1 || true
check "append: two run ids" test "$(jq -r .run_id "$tmp/two.jsonl" | sort -u | wc -l)" -eq 2

# ---- command-line errors: one line, exit 2; --help exits 0 ----
expect_usage_error() {  # expect_usage_error DESCRIPTION COMMAND...
  local what=$1
  shift
  set +e
  "$@" >/dev/null 2>"$tmp/usage.err"
  local rc=$?
  set -e
  check "$what: exit 2" test "$rc" -eq 2
  check "$what: one line" test "$(wc -l <"$tmp/usage.err")" -eq 1
}
expect_usage_error "run_demo bad flag" "$run_demo" --bogus
expect_usage_error "run_demo bad mode" "$run_demo" --mode=evil
expect_usage_error "run_demo bad number" "$run_demo" --max-steps=four
expect_usage_error "run_demo bad layer" "$run_demo" --isolate=moat
expect_usage_error "tool bad JSON" "$tool" --workspace="$tmp/good-ws" fs.read '{"path": '
expect_usage_error "tool no workspace" "$tool" fs.read '{}'
expect_usage_error "tool bad flag" "$tool" --nope
expect_usage_error "run_demo timeout 0" "$run_demo" --test-timeout-s=0
expect_usage_error "run_demo timeout past a day" "$run_demo" --test-timeout-s=86401
expect_usage_error "run_demo negative budget" "$run_demo" --max-steps=-1
expect_usage_error "run_demo budget past 1000000" "$run_demo" --max-tool-calls=1000001
expect_usage_error "tool timeout 0" "$tool" --workspace="$tmp/good-ws" --test-timeout-s=0 test.run
expect_usage_error "tool timeout past a day" "$tool" --workspace="$tmp/good-ws" --test-timeout-s=86401 test.run
expect_usage_error "tool three arguments" "$tool" --workspace="$tmp/good-ws" fs.read '{}' extra
expect_usage_error "tool unclosed quote in the test command" "$tool" --workspace="$tmp/good-ws" \
  --test-command="sh -c 'sh test.sh" test.run
expect_usage_error "tool empty test command" "$tool" --workspace="$tmp/good-ws" --test-command=" " test.run
check "run_demo --help exits 0" "$run_demo" --help
check "tool --help exits 0" "$tool" --help
check "run_demo --help prints the flags" grep -q -- '--test-timeout-s=VALUE' <("$run_demo" --help)
check "tool --help prints the flags" grep -q -- '--test-timeout-s=VALUE' <("$tool" --help)
# The edges that are allowed: a day of test timeout and a budget of 1000000 run.
"$run_demo" --mode=good --test-timeout-s=86400 --max-steps=1000000 --workspace="$tmp/edge-ws" \
  --trace="$tmp/edge.jsonl" >"$tmp/edge.out" 2>/dev/null || true
check "run_demo accepts the edges of its ranges" jq_e '.stop_reason == "done"' "$tmp/edge.out"
"$tool" --workspace="$tmp/edge-ws" --test-timeout-s=1 fs.read '{"path": "calc.sh"}' >"$tmp/edge-tool.out" || true
check "tool accepts a timeout of 1 s" jq_e '.ok' "$tmp/edge-tool.out"
"$tool" --workspace="$tmp/edge-ws" --test-timeout-s=86400 fs.read '{"path": "calc.sh"}' >"$tmp/edge-tool-day.out" || true
check "tool accepts a timeout of a day" jq_e '.ok' "$tmp/edge-tool-day.out"

set +e
"$run_demo" --trace=/nonexistent-dir/t.jsonl --workspace="$tmp/loop-ws" >/dev/null 2>"$tmp/start.err"
rc=$?
set -e
check "run_demo unwritable trace: exit 1" test "$rc" -eq 1
check "run_demo unwritable trace: names the file" grep -q "/nonexistent-dir/t.jsonl" "$tmp/start.err"
mkdir -p "$tmp/project"
echo "precious" >"$tmp/project/notes.txt"
set +e
"$run_demo" --workspace="$tmp/project" --trace="$tmp/p.jsonl" >/dev/null 2>"$tmp/project.err"
rc=$?
set -e
check "run_demo refuses a non-demo directory" test "$rc" -eq 1
check "run_demo left the project alone" test ! -e "$tmp/project/calc.sh"

# ---- the single-tool command ----
"$tool" --workspace="$tmp/good-ws" fs.read '{"path": "calc.sh"}' >"$tmp/tool.out"
check "tool fs.read ok with a sha256 ref" jq_e '.ok and (.refs[0].sha256 | length == 64)' "$tmp/tool.out"
check "tool: the envelope is indented by two" grep -qx '  "ok": true,' "$tmp/tool.out"
set +e
"$tool" --workspace="$tmp/good-ws" fs.read '{"path": "../secret.txt"}' >"$tmp/tool-esc.out"
rc=$?
set -e
check "tool escape exits 1" test "$rc" -eq 1
check "tool escape is EPERM" jq_e '.error.code == "EPERM"' "$tmp/tool-esc.out"
"$tool" --workspace="$tmp/good-ws" test.run >"$tmp/tool-test.out" || true
check "tool test.run passes on the fixed workspace" jq_e '.data.passed == true' "$tmp/tool-test.out"
# A test command with a quoted script reaches the runner as three words, not split at its spaces.
"$tool" --workspace="$tmp/good-ws" --test-command="sh -c 'sh test.sh && echo quoted-ok'" test.run \
  >"$tmp/tool-quoted.out" || true
check "tool --test-command keeps a quoted script whole" \
  jq_e '.data.passed == true and (.data.stdout | contains("quoted-ok"))' "$tmp/tool-quoted.out"
"$tool" --workspace="$tmp/good-ws" --scopes=workspace:read patch.apply '{"path":"calc.sh","old":"a + b","new":"a - b"}' >"$tmp/tool-scope.out" || true
"$tool" --workspace="$tmp/good-ws" --isolate=all test.run >"$tmp/tool-iso.out" || true
check "tool --isolate=all test.run passes" jq_e '.data.passed == true and (.data.layers_in_force | length > 0)' "$tmp/tool-iso.out"
check "tool without write scope is EPERM" jq_e '.error.code == "EPERM"' "$tmp/tool-scope.out"
"$tool" --workspace="$tmp/good-ws" --list >"$tmp/tool-list.out" || true
check "tool --list names six tools" jq_e 'length == 6' "$tmp/tool-list.out"
check "tool --list is indented by two" grep -qx '    "name": "fs.read"' "$tmp/tool-list.out"

if [ "$failures" -ne 0 ]; then
  echo "demo_test: $failures check(s) failed" >&2
  exit 1
fi
echo "demo_test: all checks passed"
