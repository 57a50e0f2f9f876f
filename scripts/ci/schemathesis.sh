#!/usr/bin/env bash
# Schema fuzzing of the gateway's REST API with schemathesis (property-based tests generated from
# /openapi.json). Installs a pinned schemathesis into a cached virtualenv on first use (idempotent),
# then runs a bounded campaign against a running stack on loopback.
#
#   scripts/ci/schemathesis.sh --install-only
#   SCHEMATHESIS_BASE_URL=http://127.0.0.1:8080 SCHEMATHESIS_API_KEY=tws_… scripts/ci/schemathesis.sh
#
# Environment:
#   SCHEMATHESIS_BASE_URL      gateway URL (required; loopback only: the script refuses anything else)
#   SCHEMATHESIS_API_KEY       API key of a pro workspace (required)
#   SCHEMATHESIS_MAX_EXAMPLES  examples per operation and phase (default 25)
#   SCHEMATHESIS_TIME_LIMIT    seconds before the campaign is stopped (default 240)
#   SCHEMATHESIS_SEED          hypothesis seed (default 20261122, so runs are reproducible)
#   SCHEMATHESIS_WORKERS       concurrent workers (default 2)
#   SCHEMATHESIS_RATE_LIMIT    request rate (default 30/s, under the gateway's per-key bucket)
#   SCHEMATHESIS_CONFIG        a schemathesis.toml to use (e.g. test/fuzz/schemathesis.toml, which
#                              takes real resource ids from TWS_FUZZ_* variables)
#   SCHEMATHESIS_EXTRA_ARGS    further schemathesis arguments (word-split)
# createWebhook is excluded: a fuzzed endpoint URL with a public IP literal would make the webhooks
# service send traffic off the machine. Its validation is covered by webhooks-registration.test.ts.
# Exit status: schemathesis' own (0 = no failed check), 124 when the time limit was hit.
set -euo pipefail

SCHEMATHESIS_VERSION="4.32.5"
TWS_CACHE_DIR="${TWS_CACHE_DIR:-$HOME/.cache/task-workspace}"
ST_VENV="$TWS_CACHE_DIR/venv-schemathesis"
REQUIREMENT="schemathesis==$SCHEMATHESIS_VERSION"

say() { printf '[schemathesis] %s\n' "$*" >&2; }

# The newest Python 3.12+ on PATH (CPython 3.11 trips "SystemError: AST constructor recursion depth
# mismatch" inside hypothesis while schemathesis builds coverage cases), else python3.
pick_python() {
  if [ -n "${SCHEMATHESIS_PYTHON:-}" ]; then printf '%s' "$SCHEMATHESIS_PYTHON"; return; fi
  local candidate pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  # shellcheck disable=SC2207,SC2012 # pyenv version directories have no spaces
  local pyenv_pythons=($(ls -d "$pyenv_root"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV))
  for candidate in python3.13 python3.12 "${pyenv_pythons[@]}" python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import venv' >/dev/null 2>&1; then
      printf '%s' "$candidate"
      return
    fi
  done
}

ensure_schemathesis() {
  local marker="$ST_VENV/.task-workspace-requirements" python wanted
  python="$(pick_python)"
  [ -n "$python" ] || { say "python3 (3.12 or later preferred) is needed"; exit 1; }
  wanted="$REQUIREMENT $("$python" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')"
  if [ -x "$ST_VENV/bin/schemathesis" ] && [ "$(cat "$marker" 2>/dev/null)" = "$wanted" ]; then
    say "$wanted (cached at $ST_VENV)"
    return
  fi
  say "installing $wanted into $ST_VENV"
  rm -rf "$ST_VENV"
  "$python" -m venv "$ST_VENV"
  "$ST_VENV/bin/pip" install --quiet --disable-pip-version-check "$REQUIREMENT"
  printf '%s' "$wanted" >"$marker"
  say "installed $("$ST_VENV/bin/schemathesis" --version 2>&1 | head -n1)"
}

ensure_schemathesis
[ "${1:-}" = "--install-only" ] && exit 0

: "${SCHEMATHESIS_BASE_URL:?set SCHEMATHESIS_BASE_URL to the gateway URL}"
: "${SCHEMATHESIS_API_KEY:?set SCHEMATHESIS_API_KEY to an API key of a pro workspace}"
case "$SCHEMATHESIS_BASE_URL" in
  http://127.*|http://localhost[:/]*|http://\[::1\]*) ;;
  *) say "refusing $SCHEMATHESIS_BASE_URL: fuzz traffic goes to loopback only"; exit 2 ;;
esac
BASE="${SCHEMATHESIS_BASE_URL%/}"
read -r -a extra_args <<<"${SCHEMATHESIS_EXTRA_ARGS:-}"
config_args=()
if [ -n "${SCHEMATHESIS_CONFIG:-}" ]; then
  config_args=(--config-file "$(cd "$(dirname "$SCHEMATHESIS_CONFIG")" && pwd)/$(basename "$SCHEMATHESIS_CONFIG")")
fi

# Hypothesis keeps its example database in the working directory: keep it out of the repository.
WORKDIR="$TWS_CACHE_DIR/schemathesis-work"
mkdir -p "$WORKDIR"
cd "$WORKDIR"

# No proxy for loopback, whatever the environment says.
export NO_PROXY="127.0.0.1,localhost,::1" no_proxy="127.0.0.1,localhost,::1"
unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy

say "fuzzing $BASE/openapi.json (max examples ${SCHEMATHESIS_MAX_EXAMPLES:-25}, limit ${SCHEMATHESIS_TIME_LIMIT:-240} s)"
set +e
timeout --kill-after=10 "${SCHEMATHESIS_TIME_LIMIT:-240}" \
  "$ST_VENV/bin/schemathesis" "${config_args[@]}" run "$BASE/openapi.json" \
  --url "$BASE" \
  --header "X-API-Key: $SCHEMATHESIS_API_KEY" \
  --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-25}" \
  --seed "${SCHEMATHESIS_SEED:-20261122}" \
  --workers "${SCHEMATHESIS_WORKERS:-2}" \
  --request-timeout 15 \
  --rate-limit "${SCHEMATHESIS_RATE_LIMIT:-30/s}" \
  --generation-database none \
  --exclude-operation-id createWebhook \
  --no-color \
  "${extra_args[@]}"
status=$?
set -e
[ "$status" -eq 124 ] && say "time limit of ${SCHEMATHESIS_TIME_LIMIT:-240} s reached"
exit "$status"
