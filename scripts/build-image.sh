#!/usr/bin/env bash
# Builds deploy/Dockerfile into $IMAGE (default localhost/rayjournal/operator:dev) with podman:
# no daemon, as root. No image registry is reachable from these machines, so the two bases the
# Dockerfile names are made here from Debian packages when absent: mmdebstrap writes a minimal
# bookworm root (security and updates included) and podman imports it as debian:bookworm, and a
# second one without docs and man pages as debian:bookworm-slim. A second run reuses the bases
# and podman's layer cache: seconds when nothing changed.
#   IMAGE=name:tag        the image to build
#   REBUILD_BASES=1       make the base images again (for a newer Debian point release)
# Prints the image's size and the build's duration at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-localhost/rayjournal/operator:dev}
log() { echo "build-image: $*" >&2; }
# The bases, runc and the podman flags these machines need: scripts/image-bases.sh.
source scripts/image-bases.sh
started=$(date +%s)
make_bases
log "building $IMAGE from deploy/Dockerfile"
podman build "${PODMAN_RUN_FLAGS[@]}" --network host --pull=never --layers \
  -f deploy/Dockerfile -t "$IMAGE" .
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE: $((size / 1024 / 1024)) MiB in $(($(date +%s) - started)) s"
