#!/usr/bin/env bash
# The delivery script (seed 13.8.5) in this project's terms: the tests, the agent demo in its good,
# loop and escape modes with jq assertions, the trace checks and the seed's three observation
# commands (13.7.2). Every assertion is an exit status (jq -e, test); the first failure stops the
# run. Prints ALL CHECKS PASSED at the end.
#
#   bash ci/acceptance.sh [--record FILE]
#
# --record FILE writes a Markdown acceptance record (seed 13.9.3): date, commit, OS, kernel,
# compiler, Bazel version, then each command exactly as run, its exit status, its output (trimmed)
# and the verdict, so a reviewer can re-run what was run. The record is written on failure too.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

record=""
while [ $# -gt 0 ]; do
  case $1 in
    --record) [ $# -ge 2 ] || { echo "acceptance: --record needs a file name" >&2; exit 2; }
              record=$2; shift 2 ;;
    --record=*) record=${1#--record=}; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "acceptance: unknown argument '$1' (usage: bash ci/acceptance.sh [--record FILE])" >&2
       exit 2 ;;
  esac
done
if [ -n "$record" ]; then
  case $record in /*) ;; *) record="$repo/$record" ;; esac
  mkdir -p "$(dirname "$record")"
fi

# Every file this run makes lives here; `bazel run` changes directory, so paths are absolute.
work=$(mktemp -d "${TMPDIR:-/tmp}/acceptance.XXXXXX")
sections=$work/record-sections.md
summary=$work/record-summary.md
: >"$sections"
: >"$summary"
n=0
verdict="FAILED"
failed_check=""

# Quiet Bazel: the record should show the demo's output, not progress lines.
BAZEL_RUN="bazel run --noshow_progress --ui_event_filters=-info,-debug"

# trimmed FILE: the whole output if short, else its first 40 and last 20 lines.
trimmed() {
  local lines
  lines=$(wc -l <"$1" | tr -d ' ')
  if [ "$lines" -le 70 ]; then
    cat "$1"
  else
    head -n 40 "$1"
    echo "... ($((lines - 60)) of $lines lines trimmed) ..."
    tail -n 20 "$1"
  fi
}

write_record() {
  [ -n "$record" ] || return 0
  {
    echo "# Acceptance record"
    echo
    echo "| | |"
    echo "| --- | --- |"
    echo "| date | $(date -u '+%Y-%m-%d %H:%M:%S UTC') |"
    echo "| commit | \`$(git rev-parse HEAD 2>/dev/null || echo 'not a git checkout')\` ($(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo '?'); $(git status --porcelain 2>/dev/null | wc -l | tr -d ' ') uncommitted changes) |"
    echo "| OS | $( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || sw_vers -productVersion 2>/dev/null || uname -s) ($(uname -m)) |"
    echo "| kernel | $(uname -sr) |"
    echo "| compiler | $( (${CC:-cc} --version 2>/dev/null || echo unknown) | head -n 1) |"
    # Debian's bazel-bootstrap reports "no_version"; its package version says which Bazel it is.
    echo "| Bazel | $(bazel --version 2>/dev/null || echo unknown)$(dpkg-query -W -f=' (${Package} ${Version})' bazel-bootstrap 2>/dev/null || true) |"
    echo "| jq | $(jq --version 2>/dev/null || echo unknown) |"
    echo "| user | uid $(id -u) |"
    echo "| verdict | **$verdict**${failed_check:+ (first failure: $failed_check)} |"
    echo
    echo "Re-run: check out the commit above, then \`bash ci/acceptance.sh --record FILE\` from the"
    echo "repository root. Each command below is exactly what ran; temporary files were under \`$work\`."
    echo
    echo "| # | check | verdict |"
    echo "| --- | --- | --- |"
    cat "$summary"
    echo
    cat "$sections"
  } >"$record"
  echo "acceptance: record written to $record"
}

finish() {
  local status=$?
  write_record
  rm -rf "$work"
  if [ "$status" -ne 0 ] && [ -z "$failed_check" ]; then
    echo "acceptance: stopped with status $status outside a check" >&2
  fi
}
trap finish EXIT

# check NAME EXPECT COMMAND: runs COMMAND in bash with strict mode, shows it and its output, and
# records it. EXPECT is "ok" (exit status 0 required) or "any" (the status is recorded, not
# judged: the seed runs loop and escape with `|| true` and judges their JSON instead).
check() {
  local name=$1 expect=$2 cmd=$3 out status=0 result
  n=$((n + 1))
  out=$work/out.$n
  echo "== $n. $name"
  echo "\$ $cmd"
  bash -c "set -euo pipefail; $cmd" >"$out" 2>&1 || status=$?
  trimmed "$out" | sed 's/^/  /'
  if [ "$expect" = any ]; then result=RAN
  elif [ "$status" -eq 0 ]; then result=PASS
  else result=FAIL; fi
  echo "-- $result (exit status $status)"
  echo "| $n | $name | $result |" >>"$summary"
  {
    echo "## $n. $name"
    echo
    echo '````sh'
    echo "$cmd"
    echo '````'
    echo
    echo "Exit status $status; verdict **$result**$([ "$expect" = any ] && echo ' (the status is recorded; the next check judges the output)')."
    echo
    echo '````text'
    trimmed "$out"
    echo '````'
    echo
  } >>"$sections"
  if [ "$result" = FAIL ]; then
    failed_check="$n. $name"
    echo "acceptance: FAILED at check $n ($name)" >&2
    exit 1
  fi
}

# The demo is the subject of most checks: without it acceptance must fail, never pass vacuously.
check "the demo target //agent:run_demo exists" ok \
  "bazel query --noshow_progress //agent:run_demo 2>&1 || { echo '//agent:run_demo is not in this tree: the agent demo has not landed, so acceptance cannot pass'; exit 1; }"

check "tests pass" ok "bazel test //..."

# Good: read, patch, test, finish; exit status 0 only for done.
check "good: run the demo" ok \
  "$BAZEL_RUN //agent:run_demo -- --mode=good --trace=$work/good.jsonl | tee $work/good.json"
check "good: stop_reason done after 4 steps" ok \
  "test -s $work/good.json && jq -e 'select(.stop_reason == \"done\" and .steps == 4)' $work/good.json"

# Loop: the same action repeated; the third equal fingerprint stops it.
check "loop, --max-steps=4: run the demo" any \
  "$BAZEL_RUN //agent:run_demo -- --mode=loop --max-steps=4 >$work/loop4.json; cat $work/loop4.json"
check "loop, --max-steps=4: no_progress after 3 steps" ok \
  "test -s $work/loop4.json && jq -e 'select(.stop_reason == \"no_progress\" and .steps == 3)' $work/loop4.json"
check "loop, --max-steps=5: run the demo" any \
  "$BAZEL_RUN //agent:run_demo -- --mode=loop --max-steps=5 >$work/loop5.json; cat $work/loop5.json"
check "loop, --max-steps=5: no_progress or max_steps" ok \
  "test -s $work/loop5.json && jq -e 'select(.stop_reason == \"no_progress\" or .stop_reason == \"max_steps\")' $work/loop5.json"

# Escape: the first action reads ../secret.txt and must be refused with EPERM.
check "escape: run the demo" any \
  "$BAZEL_RUN //agent:run_demo -- --mode=escape --trace=$work/escape.jsonl >$work/escape.json; cat $work/escape.json"
check "escape: trace step 1 is refused with EPERM" ok \
  "jq -e -s 'map(select(.step == 1)) | length == 1 and .[0].result.ok == false and .[0].result.error.code == \"EPERM\"' $work/escape.jsonl"

# Trace: every step is a line; a successful step is in it.
check "trace: the good trace has at least 3 lines, at least 3 of them steps" ok \
  "wc -l <$work/good.jsonl; test \"\$(wc -l <$work/good.jsonl)\" -ge 3
   jq -e -s '[.[] | select(.step != null)] | length >= 3' $work/good.jsonl"
check "trace: the good trace has a step with result.ok == true" ok \
  "jq -e -s 'any(.[]; .step != null and .result.ok == true)' $work/good.jsonl"

# The seed's three observation commands (13.7.2), as printed there, then what their output must say.
check "observe 1: calls per tool (good trace)" ok \
  "jq -r '.decision.tool' $work/good.jsonl | sort | uniq -c | sort -nr | tee $work/tools.txt
   for tool in fs.read patch.apply test.run task.finish; do
     grep -Eq \"^ *[0-9]+ \$tool\\\$\" $work/tools.txt || { echo \"no call of \$tool in the good run\"; exit 1; }
   done"
check "observe 2: failed steps and codes (good trace: none)" ok \
  "jq -r 'select(.result.ok == false) | [.step, .decision.tool, .result.error.code] | @tsv' $work/good.jsonl | tee $work/fail.txt
   test ! -s $work/fail.txt && echo '(no failed step)'"
check "observe 2: failed steps and codes (escape trace: step 1 EPERM)" ok \
  "jq -r 'select(.result.ok == false) | [.step, .decision.tool, .result.error.code] | @tsv' $work/escape.jsonl | tee $work/fail-escape.txt
   awk -F'\\t' '\$1 == 1 && \$3 == \"EPERM\" { found = 1 } END { exit !found }' $work/fail-escape.txt"
check "observe 3: budget curve (steps_left falls by one per step)" ok \
  "jq -r '[.step, .budget_before.steps_left, .budget_before.tools_left] | @tsv' $work/good.jsonl
   jq -e -s '[.[] | select(.step != null) | .budget_before.steps_left] as \$s
             | (\$s | length) >= 3 and ([range(1; \$s | length) | \$s[. - 1] - \$s[.]] | all(. == 1))' $work/good.jsonl"

# Issue 8: the trace is the regression tool. Replay feeds the recorded results back through the loop
# (no tool runs) and every decision must match; stats and the HTML view read the same file.
check "replay: the good run replays with every decision matching" ok \
  "$BAZEL_RUN //agent/observe:trace -- replay $work/good.jsonl"
check "replay: the escape run replays too" ok \
  "$BAZEL_RUN //agent/observe:trace -- replay $work/escape.jsonl"
check "stats: the good run in numbers" ok \
  "$BAZEL_RUN //agent/observe:trace -- stats $work/good.jsonl"
check "diff: two recordings of the good run do not diverge" ok \
  "$BAZEL_RUN //agent:run_demo -- --mode=good --trace=$work/good2.jsonl >/dev/null
   $BAZEL_RUN //agent/observe:trace -- diff $work/good.jsonl $work/good2.jsonl"
check "html: the good run's page renders in headless Chromium" ok \
  "command -v chromium >/dev/null || { echo 'chromium is missing: run platforms/setup.sh --browser'; exit 1; }
   bazel build --noshow_progress //agent/observe:trace 2>/dev/null
   bash agent/observe/render_check.sh \"\$(bazel info bazel-bin 2>/dev/null)/agent/observe/trace\" $work/good.jsonl $work/run.png
   test -s $work/run.png
   if [ -n \"$record\" ]; then cp $work/run.png \"\$(dirname \"$record\")/run.png\"; fi"

# Issue 7: the same good run with every kernel layer the machine offers.
check "good, --isolate=all: done in 4 steps under the kernel layers" ok \
  "$BAZEL_RUN //agent:run_demo -- --mode=good --isolate=all --trace=$work/good-isolated.jsonl | tee $work/good-isolated.json
   test -s $work/good-isolated.json && jq -e 'select(.stop_reason == \"done\" and .steps == 4)' $work/good-isolated.json"

verdict="ALL CHECKS PASSED"
echo "ALL CHECKS PASSED"
