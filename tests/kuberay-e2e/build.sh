#!/usr/bin/env bash
# Builds KubeRay's own e2e suites (ray-operator/test/{e2erayjob,e2erayjobsubmitter,sampleyaml,
# e2eautoscaler,e2e}), unchanged, from the KubeRay Go module into the git-ignored cache:
# $CACHE/kuberay-e2e/<package>-$KUBERAY_VERSION.test, KubeRay's submitter, and
# KubeRay's operator beside it (bench/compare-kuberay/build.sh) for the side-by-side runs, and
# ray-operator's own main as $CACHE/bin/kuberay-manager-$KUBERAY_VERSION for the real node.
# KUBERAY_VERSION: v1.7.0 is tried once; the Go module proxy has refused its zip (403), and then
# the newest version it serves whole, v1.6.2, is built. Only the Go module proxy is used.
set -euo pipefail
cd "$(dirname "$0")"
CACHE=${CONTROL_PLANE_CACHE:-$(cd ../.. && pwd)/.cache/control-plane}
OUT="$CACHE/kuberay-e2e"
log() { echo "kuberay-e2e build: $*" >&2; }
command -v go >/dev/null || { log "needs Go >= 1.25 on PATH"; exit 1; }
mkdir -p "$OUT"
version=${KUBERAY_VERSION:-}
if [ -z "$version" ]; then
  if [ -f "$OUT/version" ]; then
    version=$(cat "$OUT/version")
  elif go mod download -json "github.com/ray-project/kuberay/ray-operator@v1.7.0" \
      >/dev/null 2>&1; then
    version=v1.7.0
  else
    log "the module proxy does not serve ray-operator v1.7.0 whole; building v1.6.2"
    version=v1.6.2
  fi
  echo "$version" >"$OUT/version"
fi
# KubeRay's e2e packages that run against this project (docs/compatibility.md): each compiled
# once, unchanged, as $OUT/<package>-$version.test.
PACKAGES=(e2erayjob e2erayjobsubmitter sampleyaml e2eautoscaler e2e)
mod="$OUT/mod-$version"
mkdir -p "$mod"
for package in "${PACKAGES[@]}"; do
  binary="$OUT/$package-$version.test"
  [ -x "$binary" ] && continue
  (
    cd "$mod"
    [ -f go.mod ] || printf 'module local/kuberaye2e\n\ngo 1.25.0\n' >go.mod
    log "fetching github.com/ray-project/kuberay/ray-operator@$version's test/$package and its test dependencies"
    go get -t "github.com/ray-project/kuberay/ray-operator/test/$package@$version"
    go test -c -o "$binary.tmp" "github.com/ray-project/kuberay/ray-operator/test/$package"
    mv "$binary.tmp" "$binary"
  )
  log "$binary"
done
KUBERAY_VERSION=$version bash ../../bench/compare-kuberay/build.sh
# KubeRay's operator itself (ray-operator's main, unchanged) for the real node, where it runs in
# a Pod as its users deploy it (scripts/node/build-images.sh makes its image).
manager="$CACHE/bin/kuberay-manager-$version"
if [ ! -x "$manager" ]; then
  mkdir -p "$OUT/manager-$version" && cd "$OUT/manager-$version"
  [ -f go.mod ] || printf 'module local/kuberaymanager\n\ngo 1.25.0\n' >go.mod
  go get "github.com/ray-project/kuberay/ray-operator@$version"
  CGO_ENABLED=0 go build -trimpath -o "$manager.tmp" github.com/ray-project/kuberay/ray-operator
  mv "$manager.tmp" "$manager"
  cd - >/dev/null
fi
log "$manager"
# KubeRay's light-weight submitter (ray-operator/rayjob-submitter), the image
# e2erayjobsubmitter's cases name (scripts/node/build-images.sh makes it).
submitter="$CACHE/bin/kuberay-submitter-$version"
if [ ! -x "$submitter" ]; then
  cd "$OUT/manager-$version"
  go get "github.com/ray-project/kuberay/ray-operator/rayjob-submitter/cmd@$version"
  CGO_ENABLED=0 go build -trimpath -o "$submitter.tmp" \
    github.com/ray-project/kuberay/ray-operator/rayjob-submitter/cmd
  mv "$submitter.tmp" "$submitter"
  cd - >/dev/null
fi
log "$submitter"
