#!/usr/bin/env bash
# Digests of the images scripts/images/build.sh pushed (release workflow), as one JSON object
# {"gateway": "sha256:…", …} on stdout. Each is what build.sh recorded ($OUT_DIR/<service>.digest,
# the manifest list for a multi-arch build), checked against the registry itself: skopeo reads the
# manifest the tag points to and its sha256 must be that digest.
# Usage: digests.sh IMAGE_REGISTRY IMAGE_TAG OUT_DIR   (IMAGE_REGISTRY as build.sh takes it)
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: digests.sh IMAGE_REGISTRY IMAGE_TAG OUT_DIR" >&2; exit 2; }
image_registry=$1 tag=$2 out=$3
services=(gateway web tasks attachments webhooks)

json="{"
for service in "${services[@]}"; do
  ref="$image_registry/$service:$tag"
  recorded=""
  [ -s "$out/$service.digest" ] && recorded=$(tr -d '[:space:]' <"$out/$service.digest")
  served="sha256:$(skopeo inspect --retry-times 3 --raw "docker://$ref" | sha256sum | cut -d' ' -f1)"
  if [ -n "$recorded" ] && [ "$recorded" != "$served" ]; then
    echo "digests: $ref is $served in the registry but build.sh pushed $recorded" >&2
    exit 1
  fi
  [[ $served =~ ^sha256:[a-f0-9]{64}$ ]] || { echo "digests: no digest for $ref" >&2; exit 1; }
  echo "digests: $ref@$served" >&2
  json+="$([ "$json" = "{" ] || printf ',')\"$service\":\"$served\""
done
printf '%s}\n' "$json"
