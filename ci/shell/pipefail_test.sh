#!/usr/bin/env bash
# Seed 13.5.1: pipefail returns the RIGHTMOST non-zero status of a pipeline (5, not 3), without it a
# failure before the last stage is swallowed (0), and the per-stage statuses must be read at once:
# the next command overwrites them. Runs the seed's own commands in real shells.
# The single-quoted scripts are run by another shell: their $ expand there, not here.
# shellcheck disable=SC2016
set -euo pipefail
# Under `bazel test` the script runs as ci/<target>, so find the library in the runfiles tree;
# run by hand (bash ci/shell/x_test.sh) it sits next to this file.
repo_root=${TEST_SRCDIR:+$TEST_SRCDIR/$TEST_WORKSPACE}
repo_root=${repo_root:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=ci/shell/testlib.sh
source "$repo_root/ci/shell/testlib.sh"

for sh in $(shells_present); do
  case $sh in
    bash)
      expect bash "( exit 3 ) | ( exit 5 ) | true without pipefail, \$?" 0 \
        "$(bash -c 'set +o pipefail; ( exit 3 ) | ( exit 5 ) | true; echo $?')"
      expect bash "( exit 3 ) | ( exit 5 ) | true with pipefail, \$? (rightmost non-zero)" 5 \
        "$(bash -c 'set -o pipefail; ( exit 3 ) | ( exit 5 ) | true; echo $?')"
      expect bash "( exit 5 ) | ( exit 3 ) | true with pipefail, \$? (rightmost, not largest)" 3 \
        "$(bash -c 'set -o pipefail; ( exit 5 ) | ( exit 3 ) | true; echo $?')"
      expect bash "PIPESTATUS read immediately" "3 5 0" \
        "$(bash -c '( exit 3 ) | ( exit 5 ) | true; echo "${PIPESTATUS[*]}"')"
      expect bash "PIPESTATUS read after one more command (overwritten)" "0" \
        "$(bash -c '( exit 3 ) | ( exit 5 ) | true; true; echo "${PIPESTATUS[*]}"')"
      # set -e with pipefail stops the script at the failing pipeline; without pipefail it runs on.
      expect bash "set -e without pipefail runs past a failing first stage" "reached" \
        "$(bash -c 'set -e; false | true; echo reached' 2>&1 || true)"
      expect bash "set -eo pipefail stops at a failing first stage (exit status)" 1 \
        "$(bash -c 'set -eo pipefail; false | true; echo reached' >/dev/null 2>&1; echo $?)"
      ;;
    dash)
      expect dash "( exit 3 ) | ( exit 5 ) | true without pipefail, \$? (last stage only)" 0 \
        "$(dash -c '( exit 3 ) | ( exit 5 ) | true; echo $?')"
      expect dash "no PIPESTATUS (empty)" "" \
        "$(dash -c '( exit 3 ) | ( exit 5 ) | true; echo "${PIPESTATUS:-}"')"
      if dash -c 'set -o pipefail' 2>/dev/null; then
        # dash 0.5.13 and later know pipefail; the same rightmost rule must hold.
        expect dash "( exit 3 ) | ( exit 5 ) | true with pipefail, \$?" 5 \
          "$(dash -c 'set -o pipefail; ( exit 3 ) | ( exit 5 ) | true; echo $?')"
      else
        # Older dash (Debian 12's /bin/sh) has no pipefail at all: a `#!/bin/sh` script that says
        # `set -euo pipefail` dies on that line. This is why every CI script here is run by bash.
        expect dash "set -o pipefail is rejected (exit status 2)" 2 \
          "$(dash -c 'set -o pipefail; echo accepted' >/dev/null 2>&1; echo $?)"
      fi
      ;;
    zsh)
      # zsh spells the per-stage statuses $pipestatus (lower case).
      expect zsh "( exit 3 ) | ( exit 5 ) | true without pipefail, \$?" 0 \
        "$(zsh -c 'setopt no_pipe_fail; ( exit 3 ) | ( exit 5 ) | true; echo $?')"
      expect zsh "( exit 3 ) | ( exit 5 ) | true with pipefail, \$?" 5 \
        "$(zsh -c 'set -o pipefail; ( exit 3 ) | ( exit 5 ) | true; echo $?')"
      expect zsh "pipestatus read immediately" "3 5 0" \
        "$(zsh -c '( exit 3 ) | ( exit 5 ) | true; echo "${pipestatus[*]}"')"
      expect zsh "pipestatus after one more command (overwritten)" "0" \
        "$(zsh -c '( exit 3 ) | ( exit 5 ) | true; true; echo "${pipestatus[*]}"')"
      ;;
  esac
done
finish
