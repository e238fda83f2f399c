#!/usr/bin/env bash
# Builds the real node's images with podman from Debian-made bases (no image registry is
# reachable here), under the names Pods ask for, so that `IfNotPresent` finds them once
# scripts/cluster.sh loads them into the node's containerd:
#   localhost/rayjournal/pause:3.10             the pod sandbox (scripts/node/pause.c)
#   localhost/rayjournal/node-helper:bookworm   the local-path provisioner's helper Pods
#   docker.io/rayproject/ray:2.60.0             Ray for the operator's RayClusters and KubeRay's tests
#   docker.io/library/redis:7.4                 KubeRay's test Redis (GCS fault tolerance)
#   docker.io/rancher/curl:latest               KubeRay's test curl
#   quay.io/kuberay/operator:v1.6.2             KubeRay's operator (ray-operator's main, built by
#                                               tests/kuberay-e2e/build.sh), as its manifests name it
#   docker.io/kuberay/submitter:nightly         KubeRay's light-weight submitter (built by the same
#                                               script), as e2erayjobsubmitter names it
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
CACHE=${CONTROL_PLANE_CACHE:-$PWD/.cache/control-plane}
KUBERAY_VERSION=$(cat "$CACHE/kuberay-e2e/version" 2>/dev/null || echo v1.6.2)
KUBERAY=quay.io/kuberay/operator:$KUBERAY_VERSION
SUBMITTER=docker.io/kuberay/submitter:nightly

# A Go binary KubeRay's build made (tests/kuberay-e2e/build.sh) alone on BASE as IMAGE, in a
# context of its own (.cache is outside the repository's build context).
build_binary_image() {  # IMAGE BASE BINARY NAME
  local image=$1 base=$2 binary=$3 name=$4 context
  [ -x "$binary" ] || { log "$binary is missing: run tests/kuberay-e2e/build.sh"; exit 2; }
  context=$(mktemp -d)
  cp "$binary" "$context/$name"
  printf 'FROM %s\nCOPY %s /%s\nUSER 65532:65532\nENTRYPOINT ["/%s"]\n' "$base" "$name" "$name" \
    "$name" >"$context/Dockerfile"
  podman build "${PODMAN_RUN_FLAGS[@]}" --pull=never --layers --quiet -t "$image" "$context" >/dev/null
  rm -rf "$context"
}
# KubeRay's operator on bookworm-slim; its submitter as Dockerfile.submitter.buildx makes it (the
# static binary alone).
build_kuberay() {
  build_binary_image "$KUBERAY" localhost/debian:bookworm-slim \
    "$CACHE/bin/kuberay-manager-$KUBERAY_VERSION" manager
}
build_submitter() {
  build_binary_image "$SUBMITTER" scratch "$CACHE/bin/kuberay-submitter-$KUBERAY_VERSION" submitter
}
# The node's package mirror's wheels (scripts/node/images/mirror-requirements.txt and what they
# need), built with the host's pip (Python 3.11, as the Ray image's) into .cache/node-wheels.
build_wheels() {
  local wheels=.cache/node-wheels requirements=scripts/node/images/mirror-requirements.txt
  if cmp -s "$requirements" "$wheels/.requirements"; then return; fi
  mkdir -p "$wheels"
  python3 -m pip wheel --quiet --disable-pip-version-check -w "$wheels" -r "$requirements"
  cp "$requirements" "$wheels/.requirements"
  log "node package mirror: $(ls "$wheels" | wc -l) wheels in $wheels"
}
source scripts/image-bases.sh
make_bases
pip_cache=${PIP_CACHE_DIR:-$HOME/.cache/pip}
mkdir -p "$pip_cache"
host_ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$host_ca" ] || host_ca=/dev/null
images=("$@")
if [ ${#images[@]} -eq 0 ]; then
  images=("${!DOCKERFILE[@]}" "$HELPER")
  [ -x "$CACHE/bin/kuberay-manager-$KUBERAY_VERSION" ] && images+=("$KUBERAY")
  [ -x "$CACHE/bin/kuberay-submitter-$KUBERAY_VERSION" ] && images+=("$SUBMITTER")
fi
for image in "${images[@]}"; do
  started=$(date +%s)
  [ "$image" = docker.io/rayproject/ray:2.60.0 ] && build_wheels
  if [ "$image" = "$HELPER" ]; then
    podman tag localhost/debian:bookworm-slim "$HELPER"
  elif [ "$image" = "$KUBERAY" ]; then
    build_kuberay
  elif [ "$image" = "$SUBMITTER" ]; then
    build_submitter
  elif [ -n "${DOCKERFILE[$image]:-}" ]; then
    podman build "${PODMAN_RUN_FLAGS[@]}" --network host --pull=never --layers --quiet \
      -v "$pip_cache:/root/.cache/pip" -v "$host_ca:/run/host-ca.crt:ro" \
      -f "scripts/node/images/${DOCKERFILE[$image]}.Dockerfile" -t "$image" . >/dev/null
  else
    log "no recipe for $image (known: ${!DOCKERFILE[*]} $HELPER $KUBERAY $SUBMITTER)"; exit 2
  fi
  size=$(podman image inspect --format '{{.Size}}' "$image")
  log "$image: $((size / 1024 / 1024)) MiB in $(($(date +%s) - started)) s"
done
