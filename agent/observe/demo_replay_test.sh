#!/bin/bash
# End to end on real recordings: run_demo records each scripted mode through the real sandbox
# (workspace, runner), then `trace replay` must match every decision with no tool run, and `trace
# diff` must find two recordings of the good run the same while telling good from escape.
set -u
RUN_DEMO="$1"
TRACE="$2"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

record() {  # record MODE NAME [flags...]
  local mode="$1" name="$2"
  shift 2
  "$RUN_DEMO" --mode="$mode" --trace="$TMP/$name.jsonl" --workspace="$TMP/ws-$name" "$@" \
    > "$TMP/$name.summary" 2> "$TMP/$name.stderr"
}

record good good || fail "run_demo good: $(cat "$TMP/good.stderr")"
record good good2 || fail "run_demo good (again): $(cat "$TMP/good2.stderr")"
record loop loop --max-steps=4
record escape escape

for name in good loop escape; do
  out="$("$TRACE" replay "$TMP/$name.jsonl" 2>&1)"
  rc=$?
  echo "$out"
  [[ $rc == 0 ]] || fail "replay $name: exit $rc"
  grep -q ": match, " <<<"$out" || fail "replay $name did not match"
done

# Replay does not touch the workspace: remove it first, the replay still matches.
rm -rf "$TMP/ws-good"
"$TRACE" replay "$TMP/good.jsonl" > /dev/null 2>&1 || fail "replay without the workspace"

out="$("$TRACE" diff "$TMP/good.jsonl" "$TMP/good2.jsonl" 2>&1)"
rc=$?
echo "$out"
[[ $rc == 0 ]] || fail "two good recordings differ (exit $rc)"
"$TRACE" diff "$TMP/good.jsonl" "$TMP/escape.jsonl" > /dev/null 2>&1
[[ $? == 1 ]] || fail "diff good escape: want exit 1"

out="$("$TRACE" stats "$TMP/good.jsonl" "$TMP/escape.jsonl" 2>&1)" || fail "stats: exit $?"
echo "$out"
grep -q "errors by code: EPERM 3" <<<"$out" || fail "stats: escape's EPERM errors not counted"

"$TRACE" otel --out="$TMP/good.otel.json" "$TMP/good.jsonl" 2>/dev/null || fail "otel: exit $?"
"$TRACE" html --out="$TMP/good.html" "$TMP/good.jsonl" 2>/dev/null || fail "html: exit $?"
grep -q "execute_tool test.run" "$TMP/good.otel.json" || fail "otel: no execute_tool test.run span"

if [[ "$failures" != 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
