#!/usr/bin/env bash
# Builds the real node's images with podman from Debian-made bases (no image registry is
# reachable here), under the names Pods ask for, so that `IfNotPresent` finds them once
# scripts/cluster.sh loads them into the node's containerd:
#   localhost/rayjournal/pause:3.10             the pod sandbox (scripts/node/pause.c)
#   localhost/rayjournal/node-helper:bookworm   the local-path provisioner's helper Pods
#   docker.io/rayproject/ray:2.60.0             Ray for the operator's RayClusters and KubeRay's tests
#   docker.io/library/redis:7.4                 KubeRay's test Redis (GCS fault tolerance)
#   docker.io/rancher/curl:latest               KubeRay's test curl
# With names as arguments, only those. podman's layer cache makes a second run seconds; each
# image's size and build time are printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { echo "build-images: $*" >&2; }
declare -A DOCKERFILE=(
  [localhost/rayjournal/pause:3.10]=pause
  [docker.io/rayproject/ray:2.60.0]=ray
  [docker.io/library/redis:7.4]=redis
  [docker.io/rancher/curl:latest]=curl
)
HELPER=localhost/rayjournal/node-helper:bookworm
source scripts/image-bases.sh
make_bases
pip_cache=${PIP_CACHE_DIR:-$HOME/.cache/pip}
mkdir -p "$pip_cache"
host_ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$host_ca" ] || host_ca=/dev/null
images=("$@")
[ ${#images[@]} -gt 0 ] || images=("${!DOCKERFILE[@]}" "$HELPER")
for image in "${images[@]}"; do
  started=$(date +%s)
  if [ "$image" = "$HELPER" ]; then
    podman tag localhost/debian:bookworm-slim "$HELPER"
  elif [ -n "${DOCKERFILE[$image]:-}" ]; then
    podman build "${PODMAN_RUN_FLAGS[@]}" --network host --pull=never --layers --quiet \
      -v "$pip_cache:/root/.cache/pip" -v "$host_ca:/run/host-ca.crt:ro" \
      -f "scripts/node/images/${DOCKERFILE[$image]}.Dockerfile" -t "$image" . >/dev/null
  else
    log "no recipe for $image (known: ${!DOCKERFILE[*]} $HELPER)"; exit 2
  fi
  size=$(podman image inspect --format '{{.Size}}' "$image")
  log "$image: $((size / 1024 / 1024)) MiB in $(($(date +%s) - started)) s"
done
