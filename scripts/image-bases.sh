# Sourced by scripts/build-image.sh and scripts/node/build-images.sh: the podman flags these
# machines need and make_bases, which makes localhost/debian:bookworm and :bookworm-slim from
# Debian packages when podman lacks them (no image registry is reachable from these machines).
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
  echo "image-bases: making $name from Debian packages (mmdebstrap, minbase)" >&2
  mmdebstrap --quiet --variant=minbase "$@" bookworm "$tar" "${MIRRORS[@]}"
  podman import --quiet "$tar" "$name" >/dev/null
  rm -f "$tar"
}

# Both bases, made side by side. Two builds may run this at once (the operator image and the
# node's images): a lock keeps them from making the same base twice.
make_bases() {
  (
    flock 9
    make_base localhost/debian:bookworm &
    local full=$!
    make_base localhost/debian:bookworm-slim "${SLIM_EXCLUDES[@]}" &
    local slim=$!
    wait "$full" && wait "$slim"
  ) 9>/tmp/rayjournal-image-bases.lock
}
