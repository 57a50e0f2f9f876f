#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is on this machine for the browser tests
# (test/support/browser.ts drives it with playwright-core, which downloads no browser of its own).
# Debian's `chromium` package ships /usr/bin/chromium. Idempotent and quiet when it is there;
# runs `apt-get update` first only when the package lists are missing or apt cannot find chromium.
# Called by scripts/bootstrap.mjs before `npm test` and by test/support/browser.ts.
# CHROMIUM_PATH names another binary to use instead (then nothing is installed).
set -euo pipefail

say() { printf '[ensure-chromium] %s\n' "$*" >&2; }

find_chromium() {
  local candidate
  for candidate in "${CHROMIUM_PATH:-}" chromium chromium-browser; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1; then command -v "$candidate"; return 0; fi
  done
  return 1
}

if find_chromium >/dev/null; then
  [ -n "${VERBOSE:-}" ] && say "found $(find_chromium)"
  exit 0
fi
if [ -n "${CHROMIUM_PATH:-}" ]; then
  say "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"
  exit 1
fi

# shellcheck source=scripts/ci/apt.sh
source "$(dirname "$0")/apt.sh"
say "installing Debian's chromium package (about 100 MB, once per machine)"
apt_install chromium "install Chromium and set CHROMIUM_PATH to its binary"
if ! find_chromium >/dev/null; then
  say "apt-get installed chromium but no chromium binary is on PATH"
  exit 1
fi
say "installed $(find_chromium) ($("$(find_chromium)" --version 2>/dev/null | head -n1))"
