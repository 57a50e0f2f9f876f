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

# shellcheck source=scripts/ci/apt.sh
source "$(dirname "$0")/apt.sh"
say "installing Debian's prometheus package for its promtool (no daemon is started here)"
apt_install prometheus "install Prometheus' promtool (2.42 or later) and put it on PATH"
if ! command -v promtool >/dev/null 2>&1; then
  say "apt-get installed prometheus but promtool is still not on PATH"
  exit 1
fi
say "installed $(command -v promtool) ($(promtool --version 2>&1 | head -n1))"
