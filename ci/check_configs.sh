#!/usr/bin/env bash
# The build configurations .bazelrc promises still work: the portable path (the one macOS uses,
# with the Linux kernel layers off) builds and passes, and nothing under WORKSPACE or platforms/
# downloads by default.
set -euo pipefail
cd "$(dirname "$0")/.."

if grep -rn "http_archive\|http_file\|git_repository" WORKSPACE platforms/ | grep -v '^\s*#'; then
  echo "configs: a downloading repository rule is wired in; this project builds offline" >&2
  exit 1
fi
echo "configs: no downloading repository rule in WORKSPACE or platforms/"

bazel test --config=ci --config=portable //...
echo "configs: --config=portable builds and passes"

# ASan is run by hand (README); in CI it would double the run time of this 2-core machine.

