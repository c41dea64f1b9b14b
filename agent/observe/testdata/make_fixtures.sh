#!/bin/bash
# Regenerates every fixture in this directory. Run from the workspace root:
#   bazel build //agent/observe:record_fixtures //agent/observe:trace && agent/observe/testdata/make_fixtures.sh
set -euo pipefail
D=agent/observe/testdata
bazel-bin/agent/observe/record_fixtures "$D"
# A killed writer: lines 1-5, then the first 60 bytes of line 6 without a newline.
{ head -n 5 "$D/good.jsonl"; tail -n 1 "$D/good.jsonl" | head -c 60; } > "$D/truncated.jsonl"
# A run without run_end, every line complete.
head -n 3 "$D/good.jsonl" > "$D/killed.jsonl"
sed '2s/"trace_version":1/"trace_version":2/' "$D/good.jsonl" > "$D/bad_version.jsonl"
sed '3s/"budget_before":{"steps_left":7,"tools_left":7},//' "$D/good.jsonl" > "$D/missing_field.jsonl"
{ head -n 2 "$D/good.jsonl"; echo 'this is not json {'; tail -n +3 "$D/good.jsonl"; } > "$D/not_json.jsonl"
bazel-bin/agent/observe/trace otel "$D/good.jsonl" > "$D/good.otel.json"
