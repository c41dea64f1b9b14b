#!/usr/bin/env bash
# `bazel run //sandbox:error_codes`: one JSON line per stable error code, each with the fields an
# agent needs to act (meaning, retryable, suggested_action), and exit status 0.
set -u
out="${TEST_TMPDIR:-/tmp}/codes.jsonl"
"$1" >"$out"
rc=$?
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
[ "$rc" -eq 0 ] || fail "exit $rc"
[ "$(wc -l <"$out")" -eq 13 ] || fail "$(wc -l <"$out") lines, want one per code (13)"
jq -e -s 'length == 13 and all(.[]; (.code | test("^E[A-Z]+$")) and (.meaning | length > 0)
           and (.retryable | type == "boolean") and (.suggested_action | type == "string"))' \
  "$out" >/dev/null || fail "a line lacks a field: $(cat "$out")"
jq -e -s 'map(.code) | unique | length == 13' "$out" >/dev/null || fail "a code appears twice"
jq -e -s 'any(.[]; .code == "EPERM" and .retryable == false and .suggested_action == "stop")' \
  "$out" >/dev/null || fail "EPERM is not the first rule of the seed (not retryable, stop)"
[ "$failures" -eq 0 ] || exit 1
echo "PASS"
