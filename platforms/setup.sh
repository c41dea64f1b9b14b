#!/usr/bin/env bash
# Installs what this project needs to build and test, and nothing else; idempotent.
# Debian/Ubuntu: apt-get. macOS: Homebrew. When everything is present it only asks the package
# database once and returns (well under a second); a missing package is named before it is installed.
#
# Usage: platforms/setup.sh [--check] [--browser]
#   --check     report what is missing, install nothing (exit 1 when something is).
#   --browser   also headless Chromium, which only the acceptance script's HTML render check needs.
set -euo pipefail

check_only=0
browser=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --browser) browser=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# Debian 12 package names. bazel-bootstrap is Bazel 4.2.3; the rules packages are the offline
# rules_java and rules_cc that platforms/deps.bzl wires in.
DEBIAN_PACKAGES=(
  bazel-bootstrap bazel-rules-java bazel-rules-cc
  g++ pkg-config
  libabsl-dev libre2-dev nlohmann-json3-dev libseccomp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  json-schema-test-suite
  jq git procps iproute2 bubblewrap
)

if [ "$browser" -eq 1 ]; then DEBIAN_PACKAGES+=(chromium); fi

BREW_FORMULAE=(
  bazelisk pkg-config abseil re2 nlohmann-json googletest google-benchmark jq
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

setup_debian() {
  local missing=()
  local status
  # One dpkg-query for all packages: a line "name installed-status" each.
  status=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${DEBIAN_PACKAGES[@]}" 2>/dev/null || true)
  for p in "${DEBIAN_PACKAGES[@]}"; do
    if ! grep -qx "$p installed" <<<"$status"; then missing+=("$p"); fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "setup: all ${#DEBIAN_PACKAGES[@]} packages present"
    return 0
  fi
  echo "setup: missing: ${missing[*]}"
  if [ "$check_only" -eq 1 ]; then return 1; fi
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists yet; refresh them once before installing.
  as_root apt-get update -q
  as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
  echo "setup: installed ${missing[*]}"
}

setup_macos() {
  if [ "$browser" -eq 1 ]; then BREW_FORMULAE+=(chromium); fi
  if ! command -v brew >/dev/null; then
    echo "setup: Homebrew is required on macOS (https://brew.sh)" >&2
    return 1
  fi
  local missing=()
  local have
  have=$(brew list --formula -1 2>/dev/null || true)
  for f in "${BREW_FORMULAE[@]}"; do
    if ! grep -qx "$f" <<<"$have"; then missing+=("$f"); fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "setup: all ${#BREW_FORMULAE[@]} formulae present"
    return 0
  fi
  echo "setup: missing: ${missing[*]}"
  if [ "$check_only" -eq 1 ]; then return 1; fi
  brew install "${missing[@]}"
}

case "$(uname -s)" in
  Linux)
    if command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
      setup_debian
    else
      echo "setup: this Linux has no apt; install the equivalents of: ${DEBIAN_PACKAGES[*]}" >&2
      exit 1
    fi
    ;;
  Darwin) setup_macos ;;
  *) echo "setup: unsupported OS $(uname -s)" >&2; exit 1 ;;
esac
