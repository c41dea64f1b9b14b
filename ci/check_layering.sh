#!/usr/bin/env bash
# The layering contract: nothing under //sandbox/... depends, directly or not, on //agent/...
# Prints the offending path and exits 1 when it is broken.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! bazel query 'attr(name, ".*", //agent/...)' >/dev/null 2>&1; then
  echo "layering: //agent has no targets yet; nothing can reach it"
  exit 0
fi
path=$(bazel query --noshow_progress 'somepath(//sandbox/..., //agent/...)' 2>/dev/null)
if [ -n "$path" ]; then
  echo "layering: //sandbox reaches //agent, which the design forbids:" >&2
  echo "$path" >&2
  exit 1
fi
echo "layering: no target under //sandbox/... reaches //agent/..."
