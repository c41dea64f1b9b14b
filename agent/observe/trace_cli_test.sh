#!/bin/bash
# The trace command line: --help, exit statuses (0 ok, 1 divergence/difference, 2 usage or bad
# input), errors that name the file and line, and one run of each command on the fixtures.
set -u
TRACE="$1"
D=agent/observe/testdata
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

# expect STATUS PATTERN -- ARGS...: runs trace ARGS, checks the exit status and that stdout+stderr
# contain PATTERN (a fixed string).
expect() {
  local want="$1" pattern="$2"
  shift 3
  local out rc
  out="$("$TRACE" "$@" 2>&1)"
  rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL: trace $*: exit $rc, want $want"; echo "$out" | head -20; failures=$((failures + 1))
  elif ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL: trace $*: output lacks '$pattern'"; echo "$out" | head -20; failures=$((failures + 1))
  else
    echo "ok: trace $* -> $rc"
  fi
}

expect 0 "commands:" -- --help
expect 2 "usage: trace <command>" --
expect 2 "unknown command 'bogus'" -- bogus
for cmd in stats replay diff otel html; do
  expect 0 "usage: trace $cmd" -- "$cmd" --help
done
expect 2 "stats: unknown flag '--bogus'" -- stats --bogus "$D/good.jsonl"
expect 2 "give at least one trace FILE" -- stats

# stats
expect 0 "runs 1 (1 with run_end)" -- stats "$D/good.jsonl"
expect 0 "tool error rate 0.429 (3 of 7 steps failed)" -- stats "$D/two_runs.jsonl"
expect 0 '"error_rate": 0.42857' -- stats --json "$D/two_runs.jsonl"
expect 0 "truncated.jsonl:6: truncated last line" -- stats "$D/truncated.jsonl"
expect 2 "not_json.jsonl:3: not JSON" -- stats "$D/not_json.jsonl"
expect 2 "bad_version.jsonl:2: trace_version 2 is not supported" -- stats "$D/bad_version.jsonl"
expect 2 "missing_field.jsonl:3: step line lacks the field 'budget_before.steps_left'" -- \
  stats "$D/missing_field.jsonl"
expect 2 "cannot open trace /nonexistent.jsonl" -- stats /nonexistent.jsonl

# replay
expect 0 "(scripted:good): match, 4/4 decisions, stop_reason done" -- replay "$D/good.jsonl"
expect 0 "(scripted:escape): match, 3/3 decisions, stop_reason no_progress" -- replay "$D/two_runs.jsonl"
expect 0 '"match": true' -- replay --json --run=2222222222222222bbbbbbbbbbbbbbbb "$D/two_runs.jsonl"
sed 's/"new":"echo $((a + b))"/"new":"echo $((a * b))"/' "$D/good.jsonl" > "$TMP/edited.jsonl"
# The same run_id twice (two recordings concatenated): the steps past the first run_end were never
# compared, which is no match.
expect 1 "DIVERGED at step 5 (decision)" -- replay "$D/good.jsonl" "$TMP/edited.jsonl"
expect 0 "has step 1 where step 5 was due" -- stats "$D/good.jsonl" "$TMP/edited.jsonl"
expect 1 'recorded: patch.apply {"new":"echo $((a * b))"' -- replay "$TMP/edited.jsonl"
expect 2 "no run with run_id nope" -- replay --run=nope "$D/good.jsonl"

# diff
expect 0 "identical: 4 steps" -- diff "$D/good.jsonl" "$D/good.jsonl"
expect 1 "first divergence: step 1 (decision)" -- diff "$D/good.jsonl" "$D/escape.jsonl"
expect 1 '"kind": "result"' -- diff --json "$D/good.jsonl" "$D/xss.jsonl"
expect 2 "pick one with --run=ID" -- diff "$D/two_runs.jsonl" "$D/good.jsonl"
expect 0 "identical" -- diff --run-a=0123456789abcdef0123456789abcdef "$D/two_runs.jsonl" "$D/good.jsonl"
expect 2 "give exactly two trace files" -- diff "$D/good.jsonl"

# otel: the file equals the golden export.
expect 0 "wrote $TMP/good.otel.json" -- otel --out="$TMP/good.otel.json" "$D/good.jsonl"
if ! cmp -s "$TMP/good.otel.json" "$D/good.otel.json"; then
  echo "FAIL: otel output differs from $D/good.otel.json"; failures=$((failures + 1))
fi

# html
expect 0 "wrote $TMP/xss.html" -- html --out="$TMP/xss.html" "$D/xss.jsonl"
if grep -q "<script" "$TMP/xss.html"; then
  echo "FAIL: unescaped <script> in the page"; failures=$((failures + 1))
fi
expect 2 "pick one with --run=ID" -- html "$D/two_runs.jsonl"

# Recordings made by other versions, or edited by hand, replay without a crash:
# - a run_start without no_progress_window replays with the loop's default, 3;
jq -c 'if .type == "run_start" then del(.no_progress_window) else . end' "$D/loop.jsonl" \
  >"$TMP/loop-no-window.jsonl"
expect 0 "(scripted:loop): match, 3/3 decisions, stop_reason no_progress" -- \
  replay "$TMP/loop-no-window.jsonl"
# - state fields of the wrong type are not applied, so the fingerprint tells the difference;
jq -c 'if .type == "step" then .state.world_version = "x" | .state.done = "y" else . end' \
  "$D/good.jsonl" >"$TMP/bad-state.jsonl"
expect 1 "DIVERGED at step 2 (fingerprint)" -- replay "$TMP/bad-state.jsonl"
# - a max_tool_calls end without the decision the budget kept from running is a divergence.
jq -c 'if .type == "run_end" then del(.pending_decision) else . end' "$D/max_tool_calls.jsonl" \
  >"$TMP/no-pending.jsonl"
expect 1 "DIVERGED at step 3 (decision)" -- replay "$TMP/no-pending.jsonl"

# Every command warns about a line it skipped, on stderr, naming the file and line.
W="truncated.jsonl:6: truncated last line"
expect 0 "$W" -- replay "$D/truncated.jsonl"
expect 1 "$W" -- diff "$D/truncated.jsonl" "$D/good.jsonl"
expect 1 "$W" -- diff "$D/good.jsonl" "$D/truncated.jsonl"
expect 0 "$W" -- otel --out="$TMP/t.otel.json" "$D/truncated.jsonl"
expect 0 "$W" -- html --out="$TMP/t.html" "$D/truncated.jsonl"

# --json output is indented by two spaces, one key per line, as jq prints it.
# indented LINE -- ARGS...: trace ARGS prints LINE exactly, as one whole line.
indented() {
  local line="$1"
  shift 2
  if ! "$TRACE" "$@" 2>/dev/null | grep -qxF -- "$line"; then
    echo "FAIL: trace $*: no line '$line'"; failures=$((failures + 1))
  else
    echo "ok: trace $* indents by two"
  fi
}
indented '  "complete_runs": 1,' -- stats --json "$D/good.jsonl"
indented '    "divergence": null,' -- replay --json "$D/good.jsonl"
indented '  "differences": [],' -- diff --json "$D/good.jsonl" "$D/good.jsonl"

if [[ "$failures" != 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
