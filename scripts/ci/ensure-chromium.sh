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

if ! command -v apt-get >/dev/null 2>&1; then
  say "chromium is missing and this machine has no apt-get: install Chromium and set CHROMIUM_PATH to its binary"
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
    say "chromium is missing and installing it needs root (apt-get install chromium)"
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show chromium >/dev/null 2>&1; then
  say "apt-get update (the package lists do not know chromium yet)"
  "${sudo_cmd[@]}" apt-get update -qq
fi
say "apt-get install chromium (Debian's package; about 100 MB, once per machine)"
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
if ! find_chromium >/dev/null; then
  say "apt-get installed chromium but no chromium binary is on PATH"
  exit 1
fi
say "installed $(find_chromium) ($("$(find_chromium)" --version 2>/dev/null | head -n1))"
