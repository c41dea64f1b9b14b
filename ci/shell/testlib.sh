#!/usr/bin/env bash
# Shared helpers for the shell-semantics tests: each check prints what it verified, a failure names
# the shell, the command and both values, and the test exits non-zero at the end if any check failed.
set -euo pipefail

failures=0

# expect SHELL WHAT EXPECTED ACTUAL: one assertion, printed either way.
expect() {
  local shell=$1 what=$2 expected=$3 actual=$4
  if [ "$expected" = "$actual" ]; then
    printf 'ok    %-5s %s: %s\n' "$shell" "$what" "$actual"
  else
    printf 'FAIL  %-5s %s: expected [%s], got [%s]\n' "$shell" "$what" "$expected" "$actual"
    failures=$((failures + 1))
  fi
}

# expect_match SHELL WHAT ERE ACTUAL: the actual value matches an extended regular expression.
expect_match() {
  local shell=$1 what=$2 pattern=$3 actual=$4
  local hit
  if hit=$(printf '%s\n' "$actual" | grep -Em1 -- "$pattern"); then
    printf 'ok    %-5s %s: %s\n' "$shell" "$what" "$hit"
  else
    printf 'FAIL  %-5s %s: expected to match /%s/, got [%s]\n' "$shell" "$what" "$pattern" "$actual"
    failures=$((failures + 1))
  fi
}

skip() {
  printf 'skip  %-5s %s\n' "$1" "$2"
}

# The shells under test: bash always (the test fails without it); dash and zsh where installed.
# Nothing is installed here: a missing shell is reported as skipped, with the reason.
shells_present() {
  local sh
  command -v bash >/dev/null || { echo "FAIL  bash is required and not on PATH ($PATH)"; exit 1; }
  for sh in bash dash zsh; do
    if command -v "$sh" >/dev/null; then
      echo "$sh"
    else
      skip "$sh" "not installed (command -v $sh finds nothing); its cases are not run" >&2
    fi
  done
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
}
