#!/usr/bin/env bash
# Builds the e2e tier's real components into the git-ignored cache .cache/control-plane:
#   bin/kube-apiserver, bin/kube-controller-manager, bin/kubectl,
#   bin/kubelet, bin/kube-scheduler, bin/kube-proxy               (k8s.io/kubernetes $K8S_VERSION)
#   bin/coredns                                                   (github.com/coredns/coredns $COREDNS_VERSION)
#   bin/local-path-provisioner                   (github.com/rancher/local-path-provisioner $LOCAL_PATH_VERSION)
#   bin/etcd                                                      (go.etcd.io/etcd/server/v3 $ETCD_VERSION)
#   bin/helm                                                      (helm.sh/helm/v4 $HELM_VERSION)
#   ray-venv/                                                     (ray[default]==$RAY_VERSION from PyPI)
#   bin/vc-scheduler, volcano-crds/                               (volcano.sh/volcano $VOLCANO_VERSION)
# Each part is skipped when the cache already holds the pinned version, so a second run costs
# seconds. Only the Go module proxy and PyPI are used (see shared/reference/real-control-plane.md).
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION=${K8S_VERSION:-1.34.4}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
RAY_VERSION=${RAY_VERSION:-2.60.0}
HELM_VERSION=${HELM_VERSION:-4.3.2}
COREDNS_VERSION=${COREDNS_VERSION:-1.12.4}
LOCAL_PATH_VERSION=${LOCAL_PATH_VERSION:-0.0.30}
# The newest Volcano the module proxy serves whole (v1.11 to v1.13 are refused, 403).
VOLCANO_VERSION=${VOLCANO_VERSION:-1.10.0}
K8S_COMMANDS=(kube-apiserver kube-controller-manager kubectl kubelet kube-scheduler kube-proxy)
CACHE=${CONTROL_PLANE_CACHE:-$PWD/.cache/control-plane}
mkdir -p "$CACHE/bin"
log() { echo "build-control-plane: $*"; }
command -v go >/dev/null || { log "needs Go >= 1.24 on PATH (the machine's Go toolchain)"; exit 1; }

k8s_binaries_current() {
  for b in "${K8S_COMMANDS[@]}"; do
    [ "$b" = kubectl ] && continue
    [ -x "$CACHE/bin/$b" ] || return 1
    "$CACHE/bin/$b" --version 2>/dev/null | grep -q "v$K8S_VERSION\$" || return 1
  done
  [ -x "$CACHE/bin/kubectl" ] && "$CACHE/bin/kubectl" version --client 2>/dev/null | grep -q "v$K8S_VERSION"
}

build_kubernetes() {
  if k8s_binaries_current; then log "kubernetes v$K8S_VERSION cached"; return; fi
  log "building ${K8S_COMMANDS[*]} v$K8S_VERSION (cold: ~10-20 min)"
  local staging_tag="v0.${K8S_VERSION#1.}" dir="$CACHE/k8sbin-$K8S_VERSION"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  printf 'module local/k8sbin\n\ngo 1.24.0\n' >go.mod
  # k8s.io/kubernetes replaces its staging modules with local directories; a wrapper module
  # must replace them with their published v0.X.Y tags. The list comes from the tag's own go.mod.
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  local modules
  modules=$(sed -n 's|^[[:space:]]*k8s.io/\([a-z0-9-]*\) => ./staging/src/k8s.io/.*|\1|p' "$gomod")
  [ -n "$modules" ] || { log "no staging modules found in $gomod"; exit 1; }
  for m in $modules; do go mod edit -replace="k8s.io/$m=k8s.io/$m@$staging_tag"; done
  local c packages=()
  for c in "${K8S_COMMANDS[@]}"; do packages+=("k8s.io/kubernetes/cmd/$c"); done
  go get -tool "${packages[@]/%/@v$K8S_VERSION}"
  local minor ldflags="-s -w"
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  for kv in "gitVersion=v$K8S_VERSION" gitMajor=1 "gitMinor=$minor" gitTreeState=clean; do
    ldflags="$ldflags -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
  done
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$CACHE/bin/" "${packages[@]}"
  cd - >/dev/null
}

build_etcd() {
  if [ -x "$CACHE/bin/etcd" ] && "$CACHE/bin/etcd" --version 2>/dev/null | grep -q "etcd Version: $ETCD_VERSION\$"; then
    log "etcd $ETCD_VERSION cached"; return
  fi
  log "building etcd $ETCD_VERSION"
  local dir="$CACHE/etcdbin-$ETCD_VERSION"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  printf 'module local/etcdbin\n\ngo 1.24.0\n' >go.mod
  go get -tool "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  CGO_ENABLED=0 go build -trimpath -o "$CACHE/bin/etcd" go.etcd.io/etcd/server/v3
  cd - >/dev/null
}

build_helm() {
  if [ -x "$CACHE/bin/helm" ] && "$CACHE/bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -q "^v$HELM_VERSION\$"; then
    log "helm $HELM_VERSION cached"; return
  fi
  log "building helm $HELM_VERSION"
  local dir="$CACHE/helmbin-$HELM_VERSION" version_pkg="helm.sh/helm/v4/internal/version"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  printf 'module local/helmbin\n\ngo 1.24.0\n' >go.mod
  go get -tool "helm.sh/helm/v4/cmd/helm@v$HELM_VERSION"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X $version_pkg.version=v$HELM_VERSION" \
    -o "$CACHE/bin/helm" helm.sh/helm/v4/cmd/helm
  cd - >/dev/null
}

# A Go command built from its module in a wrapper module of its own; a stamp beside the binary
# records the version, so a second run costs nothing.
build_go_command() {
  local name=$1 module=$2 version=$3 package=${4:-$2}
  local stamp="$CACHE/bin/.$name.version"
  if [ -x "$CACHE/bin/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
    log "$name $version cached"; return
  fi
  log "building $name $version"
  local dir="$CACHE/$name-$version"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  printf 'module local/%sbin\n\ngo 1.24.0\n' "$name" >go.mod
  go get -tool "$package@v$version"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$CACHE/bin/$name" "$package"
  echo "$version" >"$stamp"
  cd - >/dev/null
}

build_node_services() {
  build_go_command coredns github.com/coredns/coredns "$COREDNS_VERSION"
  build_go_command local-path-provisioner github.com/rancher/local-path-provisioner "$LOCAL_PATH_VERSION"
}

# Volcano's scheduler and its CRDs. Its go.mod pins Kubernetes' staging modules with replace
# directives, which only the main module's go.mod applies: so it is built inside a writable copy
# of its own module, not from a wrapper module.
build_volcano() {
  local stamp="$CACHE/bin/.vc-scheduler.version"
  if [ -x "$CACHE/bin/vc-scheduler" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$VOLCANO_VERSION" ]; then
    log "vc-scheduler $VOLCANO_VERSION cached"; return
  fi
  log "building vc-scheduler $VOLCANO_VERSION"
  local module dir="$CACHE/volcano-$VOLCANO_VERSION"
  module=$(go mod download -json "volcano.sh/volcano@v$VOLCANO_VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  rm -rf "$dir" && cp -r "$module" "$dir" && chmod -R u+w "$dir"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$CACHE/bin/vc-scheduler" ./cmd/scheduler)
  rm -rf "$CACHE/volcano-crds" && cp -r "$dir/config/crd/volcano/bases" "$CACHE/volcano-crds"
  rm -rf "$dir"
  echo "$VOLCANO_VERSION" >"$stamp"
}

install_ray() {
  local venv="$CACHE/ray-venv"
  if [ -x "$venv/bin/ray" ] && "$venv/bin/python" -c "import ray,sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null; then
    log "ray $RAY_VERSION cached"; return
  fi
  log "installing ray[default]==$RAY_VERSION into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "ray[default]==$RAY_VERSION"
}

parts=${1:-all}
case "$parts" in
  all) build_etcd; build_kubernetes; build_helm; build_node_services; build_volcano; install_ray ;;
  node) build_node_services ;;
  volcano) build_volcano ;;
  helm) build_helm ;;
  kubernetes) build_kubernetes ;;
  etcd) build_etcd ;;
  ray) install_ray ;;
  *) echo "usage: $0 [all|kubernetes|etcd|helm|node|volcano|ray]" >&2; exit 2 ;;
esac
log "done: $(ls "$CACHE/bin" | tr '\n' ' ')"
