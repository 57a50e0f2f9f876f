#!/usr/bin/env bash
# Makes sure `promtool` (Prometheus' rule and metrics checker) is on this machine: Debian's
# `prometheus` package ships it as /usr/bin/promtool. Idempotent: does nothing when it is there.
# Used by scripts/ci/helm.sh (promtool check/test rules) and test/ops/metrics.test.ts
# (promtool check metrics on every service's /metrics).
set -euo pipefail

say() { printf '[ensure-promtool] %s\n' "$*" >&2; }

if command -v promtool >/dev/null 2>&1; then
  say "found $(command -v promtool) ($(promtool --version 2>&1 | head -n1))"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  say "promtool is missing and this machine has no apt-get: install Prometheus' promtool (2.42 or later) and put it on PATH"
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
    say "promtool is missing and installing it needs root (apt-get install prometheus)"
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
say "installing Debian's prometheus package (for promtool): apt-get update"
"${sudo_cmd[@]}" apt-get update -qq
say "apt-get install prometheus (only its promtool is used; no daemon is started here)"
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null
if ! command -v promtool >/dev/null 2>&1; then
  say "apt-get installed prometheus but promtool is still not on PATH"
  exit 1
fi
say "installed $(command -v promtool) ($(promtool --version 2>&1 | head -n1))"
