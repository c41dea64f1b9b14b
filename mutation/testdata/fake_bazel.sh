#!/usr/bin/env bash
# A stand-in for `bazel` in check_test.sh: fast, deterministic, no nested server. It judges the
# scratch copy it runs in by comparing lib/*.cc with pristine copies in $FAKE_GOLDEN:
#   unchanged                      -> build ok, //lib:lib_test PASSED (FAILED with FAKE_BASELINE_FAIL=1)
#   changed line mentions unviable -> build fails (exit 1), like a compile error
#   changed line mentions survivor -> tests pass (exit 0): the mutant survives
#   any other change               -> //lib:lib_test FAILED (exit 3): the mutant is killed
# With FAKE_SLEEP=N a mutant's test first records its pid in $FAKE_STATE/sleeping and sleeps; with
# FAKE_SLEEP_FROM=K too, only from the K-th mutant test on (the earlier ones are judged).
# Every call is appended to $FAKE_STATE/calls.
set -u
startup=()
while [[ $# -gt 0 && "$1" == --* ]]; do startup+=("$1"); shift; done
cmd="$1"
shift
echo "$cmd ${startup[*]} $*" >>"$FAKE_STATE/calls"
case "$cmd" in
  shutdown) exit 0 ;;
  query)
    expr="${!#}"
    if [[ "$expr" == *"//lib:"* ]]; then echo "//lib:lib_test"; fi
    exit 0
    ;;
  cquery)
    echo "//lib:lib.cc (null)"
    exit 0
    ;;
  build | test) ;;
  *)
    echo "fake bazel: unknown command $cmd" >&2
    exit 2
    ;;
esac
changed=""
for f in lib/*.cc; do
  cmp -s "$f" "$FAKE_GOLDEN/$f" || changed="$f"
done
if [[ -z "$changed" ]]; then
  if [[ "$cmd" == test ]]; then
    if [[ "${FAKE_BASELINE_FAIL:-0}" == 1 ]]; then
      echo "//lib:lib_test                                   FAILED in 0.1s"
      exit 3
    fi
    echo "//lib:lib_test                                   PASSED in 0.1s"
  fi
  exit 0
fi
mutated_lines=$(diff "$FAKE_GOLDEN/$changed" "$changed" | grep -E '^[<>]' || true)
if [[ "$cmd" == build ]]; then
  if grep -q unviable <<<"$mutated_lines"; then
    echo "$changed:1:1: error: the fake compiler rejects this mutant"
    exit 1
  fi
  exit 0
fi
echo x >>"$FAKE_STATE/mutant-tests"
if [[ -n "${FAKE_SLEEP:-}" && $(wc -l <"$FAKE_STATE/mutant-tests") -ge ${FAKE_SLEEP_FROM:-1} ]]; then
  echo $$ >"$FAKE_STATE/sleeping"
  exec sleep "$FAKE_SLEEP"
fi
if grep -q survivor <<<"$mutated_lines"; then
  echo "//lib:lib_test                                   PASSED in 0.1s"
  exit 0
fi
echo "//lib:lib_test                                   FAILED in 0.1s"
exit 3
