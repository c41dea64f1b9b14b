#!/bin/bash
# Renders a run's HTML page in headless Chromium and checks the screenshot.
#
#   agent/observe/render_check.sh TRACE_BIN TRACE_FILE [OUT_PNG]
#
# TRACE_BIN is the `trace` binary (bazel-bin/agent/observe/trace), TRACE_FILE a trace with one run.
# The screenshot goes to OUT_PNG, else to $TEST_UNDECLARED_OUTPUTS_DIR/run.png under `bazel test`,
# else to a fresh temporary directory; its path is printed. Checks: the PNG exists, is a PNG of
# 1200x900, and is not trivial: larger than a screenshot of an empty page taken the same way (a page
# that failed to render, or rendered blank, compresses to about the same size as the empty one).
# Skips (exit 0, saying so) when no Chromium is installed: `apt-get install chromium` provides it.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: render_check.sh TRACE_BIN TRACE_FILE [OUT_PNG]" >&2
  exit 2
fi
TRACE_BIN="$1"
TRACE_FILE="$2"
OUT_DIR="${TEST_UNDECLARED_OUTPUTS_DIR:-$(mktemp -d)}"
OUT_PNG="${3:-$OUT_DIR/run.png}"

CHROMIUM=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    CHROMIUM="$(command -v "$candidate")"
    break
  fi
done
if [[ -z "$CHROMIUM" ]]; then
  echo "SKIP: no chromium on PATH; install it (Debian: apt-get install chromium) to run the render check"
  exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$TRACE_BIN" html --out="$WORK/run.html" "$TRACE_FILE"
printf '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body></body></html>\n' \
  > "$WORK/empty.html"

# screenshot PAGE PNG: one headless render; a fresh profile each time, no network services.
screenshot() {
  local profile
  profile="$(mktemp -d "$WORK/profile.XXXXXX")"
  HOME="$WORK" timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$2" --window-size=1200,900 "file://$1" \
    >"$WORK/chromium.log" 2>&1 || {
      echo "FAIL: chromium exited with status $? rendering $1"; tail -20 "$WORK/chromium.log"; exit 1; }
}

screenshot "$WORK/empty.html" "$WORK/empty.png"
screenshot "$WORK/run.html" "$OUT_PNG"

if [[ ! -s "$OUT_PNG" ]]; then
  echo "FAIL: no screenshot at $OUT_PNG"; exit 1
fi
if [[ "$(head -c 8 "$OUT_PNG" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]]; then
  echo "FAIL: $OUT_PNG is not a PNG"; exit 1
fi
# IHDR: width and height are the big-endian 32-bit words at offsets 16 and 20.
dims="$(od -An -tu1 -j16 -N8 "$OUT_PNG" | tr -s ' ' | sed 's/^ //')"
read -r w1 w2 w3 w4 h1 h2 h3 h4 <<<"$dims"
width=$(( (w1 << 24) | (w2 << 16) | (w3 << 8) | w4 ))
height=$(( (h1 << 24) | (h2 << 16) | (h3 << 8) | h4 ))
if [[ "$width" != 1200 || "$height" != 900 ]]; then
  echo "FAIL: screenshot is ${width}x${height}, want 1200x900"; exit 1
fi
page_size=$(stat -c %s "$OUT_PNG")
empty_size=$(stat -c %s "$WORK/empty.png")
if (( page_size < 2 * empty_size || page_size < 8000 )); then
  echo "FAIL: screenshot looks blank: $page_size bytes, an empty page gives $empty_size"; exit 1
fi
echo "ok: rendered $TRACE_FILE to $OUT_PNG (${width}x${height}, $page_size bytes; empty page $empty_size bytes)"
