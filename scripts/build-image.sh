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
# runc: Debian's default crun refuses this kind of machine's hybrid cgroup layout.
bash scripts/setup-deps.sh podman runc mmdebstrap >&2
# The sandbox has no CAP_SYS_RESOURCE: a container may not raise its limits above the shell's.
PODMAN_RUN_FLAGS=(--runtime runc --ulimit nofile=16384:16384 --ulimit nproc=8192:8192)
MIRRORS=("deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main")
SLIM_EXCLUDES=(--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*')

make_base() {  # name, extra mmdebstrap options...
  local name=$1; shift
  if [ "${REBUILD_BASES:-0}" != 1 ] && podman image exists "$name"; then return; fi
  local tar
  tar=$(mktemp --suffix=.tar)
  log "making $name from Debian packages (mmdebstrap, minbase)"
  mmdebstrap --quiet --variant=minbase "$@" bookworm "$tar" "${MIRRORS[@]}"
  podman import --quiet "$tar" "$name" >/dev/null
  rm -f "$tar"
}

started=$(date +%s)
make_base localhost/debian:bookworm &
full=$!
make_base localhost/debian:bookworm-slim "${SLIM_EXCLUDES[@]}" &
slim=$!
wait "$full" && wait "$slim"
log "building $IMAGE from deploy/Dockerfile"
podman build "${PODMAN_RUN_FLAGS[@]}" --network host --pull=never --layers \
  -f deploy/Dockerfile -t "$IMAGE" .
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE: $((size / 1024 / 1024)) MiB in $(($(date +%s) - started)) s"
