#!/usr/bin/env bash
# Builds bench/compare-kuberay's Go programs into the git-ignored cache:
#   $CACHE/bin/kuberay-operator-$KUBERAY_VERSION  KubeRay's reconcilers (go/kuberay/main.go) built
#                                                  against github.com/ray-project/kuberay/ray-operator
#   $CACHE/bin/bench-world                         the fake kubelet, fake Ray dashboard and observer
# Both come from one wrapper module made in the cache (only the Go module proxy is used); a
# second run rebuilds only when a source changed. KUBERAY_VERSION: the newest release the proxy
# serves whole (v1.7.0 is listed, but its zip is refused: 403).
set -euo pipefail
cd "$(dirname "$0")"
KUBERAY_VERSION=${KUBERAY_VERSION:-v1.6.2}
CACHE=${CONTROL_PLANE_CACHE:-$(cd ../.. && pwd)/.cache/control-plane}
MOD="$CACHE/compare-kuberay-$KUBERAY_VERSION"
log() { echo "compare-kuberay build: $*" >&2; }
command -v go >/dev/null || { log "needs Go >= 1.25 on PATH"; exit 1; }
mkdir -p "$MOD" "$CACHE/bin"
stamp=$( (cat go/*/*.go; echo "$KUBERAY_VERSION") | sha256sum | cut -c1-16)
if [ -x "$CACHE/bin/kuberay-operator-$KUBERAY_VERSION" ] && [ -x "$CACHE/bin/bench-world" ] &&
  [ "$(cat "$MOD/.stamp" 2>/dev/null)" = "$stamp" ]; then
  log "cached ($KUBERAY_VERSION)"; exit 0
fi
rm -rf "$MOD/kuberay" "$MOD/world"
cp -r go/kuberay go/world "$MOD/"
cd "$MOD"
if [ ! -f go.mod ]; then
  printf 'module local/comparekuberay\n\ngo 1.25.0\n' >go.mod
  log "fetching github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION (cold: a few minutes)"
  go get "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION"
fi
go mod tidy
log "building"
CGO_ENABLED=0 go build -trimpath -o "$CACHE/bin/kuberay-operator-$KUBERAY_VERSION" ./kuberay
CGO_ENABLED=0 go build -trimpath -o "$CACHE/bin/bench-world" ./world
echo "$stamp" >.stamp
log "built $CACHE/bin/kuberay-operator-$KUBERAY_VERSION and $CACHE/bin/bench-world"
