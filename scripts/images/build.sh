#!/usr/bin/env bash
# Builds the service images (gateway, web, tasks, attachments, webhooks) from the one docker/Dockerfile
# with buildah, without a Docker daemon and without pulling from a container registry: the bases are
# assembled here from Debian's packages and npm (scripts/images/bases.sh). Idempotent and cached:
# buildah's layer cache and the bases live in ~/.cache/task-workspace/images (TWS_CACHE_DIR), so a
# second run rebuilds only what changed. Writes an SBOM per image (syft, SPDX JSON) and a build report.
#
# Environment (all optional):
#   IMAGE_REGISTRY   repository prefix of the images   (default localhost/task-workspace → …/gateway:TAG)
#   IMAGE_TAG        their tag                          (default: the root package.json's version)
#   IMAGE_PLATFORMS  host, or a comma list (linux/amd64,linux/arm64) built as a manifest list; other
#                    platforms than the host's need IMAGE_BASES=upstream (and qemu binfmt for RUN)
#   IMAGE_BASES      local (default: the bases built here) or upstream (the Dockerfile's defaults,
#                    node:<version>-bookworm-slim and gcr.io/distroless/cc-debian12:nonroot, pulled)
#   IMAGE_SERVICES   space-separated subset of the services (default: every services/*)
#   IMAGE_REVISION   org.opencontainers.image.revision (default: git rev-parse HEAD, "-dirty" if changed)
#   PUSH=1           push each image (or manifest list) to IMAGE_REGISTRY (credentials: buildah login)
#   OUT_DIR          where the SBOMs and build-report.json go (default ~/.cache/task-workspace/images/out)
#
# Needs root (buildah --isolation chroot, debootstrap); installs buildah and debootstrap with apt-get
# and builds syft with `go install` when missing.
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/../ci/lib.sh"
cd "$REPO_ROOT"

IMAGES_CACHE="$TWS_CACHE_DIR/images"
IMAGE_REGISTRY="${IMAGE_REGISTRY:-localhost/task-workspace}"
IMAGE_TAG="${IMAGE_TAG:-$(node -p 'require("./package.json").version')}"
IMAGE_PLATFORMS="${IMAGE_PLATFORMS:-host}"
IMAGE_BASES="${IMAGE_BASES:-local}"
PUSH="${PUSH:-0}"
OUT_DIR="${OUT_DIR:-$IMAGES_CACHE/out}"
SYFT_VERSION="v1.57.0"
SYFT="$TWS_CACHE_DIR/tools/syft-$SYFT_VERSION/syft"

services=()
if [ -n "${IMAGE_SERVICES:-}" ]; then
  read -r -a services <<<"$IMAGE_SERVICES"
else
  for manifest in services/*/package.json; do services+=("$(basename "$(dirname "$manifest")")"); done
fi
for svc in "${services[@]}"; do [ -f "services/$svc/package.json" ] || fail "IMAGE_SERVICES: no services/$svc"; done
[[ "$IMAGE_TAG" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || fail "IMAGE_TAG is not a valid tag: $IMAGE_TAG"
case "$IMAGE_BASES" in local | upstream) ;; *) fail "IMAGE_BASES must be local or upstream (got $IMAGE_BASES)" ;; esac
case "$PUSH" in 0 | 1) ;; *) fail "PUSH must be 0 or 1 (got $PUSH)" ;; esac
if [ -z "${IMAGE_REVISION:-}" ]; then
  IMAGE_REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || IMAGE_REVISION="$IMAGE_REVISION-dirty"
fi
host_platform="linux/$(dpkg --print-architecture 2>/dev/null || echo amd64)"
[ "$IMAGE_PLATFORMS" = host ] && IMAGE_PLATFORMS="$host_platform"
if [ "$IMAGE_BASES" = local ] && [ "$IMAGE_PLATFORMS" != "$host_platform" ]; then
  fail "IMAGE_PLATFORMS=$IMAGE_PLATFORMS: the local bases are built for $host_platform only; use IMAGE_BASES=upstream for others"
fi

# buildah with this project's storage (overlay where the kernel allows it, else vfs) under the cache.
export CONTAINERS_STORAGE_CONF="$IMAGES_CACHE/storage.conf"
export BUILDAH_ISOLATION=chroot
bh() { buildah "$@"; }

step "container storage ($IMAGES_CACHE/storage)"
mkdir -p "$IMAGES_CACHE" "$OUT_DIR"
# One build at a time per storage (checkouts side by side share it): each removes the containers its
# own builds left behind, which must not be another run's. The next run waits here.
exec 8>"$IMAGES_CACHE/build.lock"
if ! flock -n 8; then
  printf '    another image build uses this storage; waiting for it\n'
  flock 8
fi
if [ ! -f "$CONTAINERS_STORAGE_CONF" ]; then
  driver=overlay
  probe="$IMAGES_CACHE/probe"
  rm -rf "$probe" && mkdir -p "$probe"/{lower,upper,work,merged}
  if ! mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
    driver=vfs
  else
    umount "$probe/merged"
  fi
  rm -rf "$probe"
  printf '[storage]\ndriver = "%s"\ngraphroot = "%s"\nrunroot = "%s"\n' \
    "$driver" "$IMAGES_CACHE/storage" "$IMAGES_CACHE/run" >"$CONTAINERS_STORAGE_CONF"
fi
printf '    %s\n' "$(grep driver "$CONTAINERS_STORAGE_CONF")"

step "tools: buildah, debootstrap, syft $SYFT_VERSION"
# shellcheck source=scripts/ci/apt.sh
say() { printf '    %s\n' "$*"; }
source scripts/ci/apt.sh
[ "$(id -u)" -eq 0 ] || fail "building the images needs root (buildah --isolation chroot, debootstrap, chroot)"
command -v buildah >/dev/null 2>&1 || apt_install buildah "install buildah (https://buildah.io)"
[ "$IMAGE_BASES" = upstream ] || command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap "install debootstrap"
printf '    %s\n' "$(buildah --version)"
if [ ! -x "$SYFT" ] || ! "$SYFT" version 2>/dev/null | grep -q "${SYFT_VERSION#v}"; then
  command -v go >/dev/null 2>&1 || fail "building syft needs the Go toolchain (go) on PATH"
  printf '    building syft %s with go install (first run only; a few minutes)\n' "$SYFT_VERSION"
  mkdir -p "$(dirname "$SYFT")"
  GOBIN="$(dirname "$SYFT")" CGO_ENABLED=0 GOFLAGS=-mod=mod \
    go install -trimpath -ldflags "-s -w -X main.version=$SYFT_VERSION" "github.com/anchore/syft/cmd/syft@$SYFT_VERSION" \
    >"$IMAGES_CACHE/syft-build.log" 2>&1 || { tail -20 "$IMAGES_CACHE/syft-build.log"; fail "go install syft $SYFT_VERSION failed"; }
fi
printf '    syft %s (cached at %s)\n' "$SYFT_VERSION" "$SYFT"

base_args=()
pull=(--pull=missing)
if [ "$IMAGE_BASES" = local ]; then
  # shellcheck source=scripts/images/bases.sh
  source scripts/images/bases.sh
  step "build base: Debian $DEBIAN_SUITE minbase + Node (package.json) + npm"
  ensure_build_base
  step "runtime base: distroless-style, from Debian's .debs"
  ensure_runtime_base
  base_args=(--build-arg "BUILD_BASE=$BUILD_BASE" --build-arg "RUNTIME_BASE=$RUNTIME_BASE")
  pull=(--pull=never)
fi

# A TLS-intercepting proxy's CA bundle (this machine's npm trusts one through NODE_EXTRA_CA_CERTS or its
# cafile): mounted for npm ci as the secret build-ca, never stored in a layer. IMAGE_BUILD_CA overrides.
build_ca="${IMAGE_BUILD_CA-${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null | grep -v '^null$' || true)}}"
if [ -n "$build_ca" ]; then
  [ -f "$build_ca" ] || fail "IMAGE_BUILD_CA / NODE_EXTRA_CA_CERTS / npm's cafile names $build_ca, which is not a file"
  base_args+=(--secret "id=build-ca,src=$build_ca" --build-arg NODE_EXTRA_CA_CERTS=/run/secrets/build-ca)
  printf '    npm ci in the build trusts the CA bundle %s (secret build-ca)\n' "$build_ca"
fi

report="$OUT_DIR/build-report.json"
entries=()
for svc in "${services[@]}"; do
  ref="$IMAGE_REGISTRY/$svc:$IMAGE_TAG"
  step "$svc: buildah bud --isolation chroot --layers -f docker/Dockerfile --build-arg SERVICE=$svc → $ref ($IMAGE_PLATFORMS)"
  started=$SECONDS
  log="$OUT_DIR/$svc.build.log"
  previous=$(bh inspect --type image --format '{{.FromImageID}}' "$ref" 2>/dev/null || true)
  containers_before=$(bh containers -q | sort)
  target=(--tag "$ref")
  if [[ "$IMAGE_PLATFORMS" == *,* ]]; then
    bh manifest rm "$ref" >/dev/null 2>&1 || true
    target=(--manifest "$ref")
  fi
  if ! bh bud --isolation chroot --layers "${pull[@]}" --platform "$IMAGE_PLATFORMS" "${target[@]}" \
    -f docker/Dockerfile --build-arg "SERVICE=$svc" --build-arg "VERSION=$IMAGE_TAG" --build-arg "REVISION=$IMAGE_REVISION" \
    "${base_args[@]}" . >"$log" 2>&1; then
    tail -30 "$log"
    fail "building the $svc image failed (log: $log)"
  fi
  # buildah 1.28 leaves a working container behind for some cached stages: this build's are removed.
  # (One that is gone by now, removed by buildah itself, is no failure.)
  comm -13 <(printf '%s\n' "$containers_before") <(bh containers -q | sort) | xargs -r -n1 buildah rm >/dev/null 2>&1 || true
  if [[ "$IMAGE_PLATFORMS" != *,* ]]; then
    # buildah's layer cache keys a LABEL step by its text, not by the build arguments it expands: a
    # cached build would keep the previous revision. The labels are set once more on the final image.
    bh rm "tws-label-$svc" >/dev/null 2>&1 || true
    ctr=$(bh from --pull=never --name "tws-label-$svc" "$ref")
    bh config --label "org.opencontainers.image.version=$IMAGE_TAG" --label "org.opencontainers.image.revision=$IMAGE_REVISION" \
      --env "GIT_REVISION=$IMAGE_REVISION" "$ctr"
    bh commit --quiet --rm "$ctr" "$ref" >/dev/null
    # The previous run's labelled image, now untagged and a leaf: removed so the storage does not grow
    # by an image per run (the layer cache is its parent and stays).
    current=$(bh inspect --type image --format '{{.FromImageID}}' "$ref")
    [ -z "$previous" ] || [ "$previous" = "$current" ] || bh rmi "$previous" >/dev/null 2>&1 || true
  fi
  built=$((SECONDS - started))
  cached=$(grep -c -- '--> Using cache' "$log" || true)
  steps=$(grep -c -E 'STEP [0-9]+/[0-9]+: ' "$log" || true)

  # The SBOM of what the image holds (host platform): its root filesystem, scanned with syft's image catalogers.
  sbom="$OUT_DIR/$svc.spdx.json"
  bh rm "tws-sbom-$svc" >/dev/null 2>&1 || true
  ctr=$(bh from --pull=never --name "tws-sbom-$svc" "$ref")
  mnt=$(bh mount "$ctr")
  size=$(du -sb "$mnt" | cut -f1)
  "$SYFT" scan "dir:$mnt" --quiet --override-default-catalogers image --source-name "$IMAGE_REGISTRY/$svc" \
    --source-version "$IMAGE_TAG" -o "spdx-json=$sbom" || { bh rm "$ctr" >/dev/null; fail "syft could not scan the $svc image"; }
  bh rm "$ctr" >/dev/null
  packages=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).packages.length)' "$sbom")
  id=$(bh inspect --type image --format '{{.FromImageID}}' "$ref" 2>/dev/null || echo manifest-list)
  digest=""
  if [ "$PUSH" = 1 ]; then
    printf '    pushing %s\n' "$ref"
    if [[ "$IMAGE_PLATFORMS" == *,* ]]; then
      bh manifest push --all --digestfile "$OUT_DIR/$svc.digest" "$ref" "docker://$ref"
    else
      bh push --digestfile "$OUT_DIR/$svc.digest" "$ref" "docker://$ref"
    fi
    digest=$(cat "$OUT_DIR/$svc.digest")
  fi
  printf '    %s: %s MB, %ss (%s of %s steps from cache), SBOM %s (%s packages)%s\n' "$ref" "$((size / 1000000))" "$built" \
    "$cached" "$steps" "$sbom" "$packages" "${digest:+, pushed $digest}"
  entries+=("$(node -e 'const [service,ref,id,size,seconds,cached,steps,sbom,packages,digest,platforms]=process.argv.slice(1);
console.log(JSON.stringify({service,ref,id,sizeBytes:+size,seconds:+seconds,cachedSteps:+cached,steps:+steps,sbom,sbomPackages:+packages,digest:digest||null,platforms:platforms.split(",")}))' \
    "$svc" "$ref" "$id" "$size" "$built" "$cached" "$steps" "$sbom" "$packages" "$digest" "$IMAGE_PLATFORMS")")
done

node -e 'const [out,revision,bases,buildBase,runtimeBase,...images]=process.argv.slice(1);
require("fs").writeFileSync(out, JSON.stringify({revision,bases,buildBase:buildBase||null,runtimeBase:runtimeBase||null,images:images.map(JSON.parse)},null,2)+"\n")' \
  "$report" "$IMAGE_REVISION" "$IMAGE_BASES" "${BUILD_BASE:-}" "${RUNTIME_BASE:-}" "${entries[@]}"
printf '    build report: %s\n' "$report"
finish "scripts/images/build.sh (${#services[@]} images)"
