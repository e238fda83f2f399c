#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, for running the operator as users deploy
# it and KubeRay's e2e suites (docs/real-node.md):
#   bash scripts/cluster.sh up                 build what is missing, start the cluster; the last
#                                              line is `export KUBECONFIG=...` (eval it)
#   bash scripts/cluster.sh install-operator   build the operator image, load it into the node and
#                                              `helm upgrade --install` deploy/helm/rayjournal-operator
#                                              into rayjournal-system; waits until it is Ready
#   bash scripts/cluster.sh images [NAME...]   build the node's images (Ray, Redis, curl) and load them
#   bash scripts/cluster.sh down               stop everything and remove what it left on the host
#   bash scripts/cluster.sh status | leftovers
# Components build into .cache/control-plane (scripts/build-control-plane.sh), images with podman
# (scripts/node/build-images.sh); the cluster's state lives in NODE_ROOT (/var/lib/rayjournal-node).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "cluster: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "runs as root (it starts a kubelet and containerd)"; exit 2; }
cluster() { python3 scripts/node/cluster.py "$@"; }
kube() { .cache/control-plane/bin/kubectl --kubeconfig "${NODE_ROOT:-/var/lib/rayjournal-node}/admin.kubeconfig" "$@"; }
NODE_IMAGES=(docker.io/rayproject/ray:2.60.0 docker.io/library/redis:7.4 docker.io/rancher/curl:latest)
OPERATOR_IMAGE=${OPERATOR_IMAGE:-localhost/rayjournal/operator:dev}

install_operator() {
  bash scripts/build-image.sh
  cluster load-image "$OPERATOR_IMAGE" docker.io/rayproject/ray:2.60.0
  .cache/control-plane/bin/helm upgrade --install rayjournal deploy/helm/rayjournal-operator \
    --kubeconfig "${NODE_ROOT:-/var/lib/rayjournal-node}/admin.kubeconfig" \
    --namespace rayjournal-system --create-namespace \
    --set image.repository="${OPERATOR_IMAGE%:*}" --set image.tag="${OPERATOR_IMAGE##*:}" \
    --set image.pullPolicy=IfNotPresent --set journal.size=1Gi \
    --set-string "podAnnotations.rayjournal\.io/image-id=$(podman image inspect --format '{{.Id}}' "$OPERATOR_IMAGE" | cut -c1-12)" \
    "$@"
  wait_operator_ready
}

# Every replica at the chart's revision and one Ready: the leader (standbys waiting for the Lease
# are not Ready until they lead).
wait_operator_ready() {
  local deadline=$(($(date +%s) + 240)) state
  while [ "$(date +%s)" -lt "$deadline" ]; do
    state=$(kube -n rayjournal-system get statefulset rayjournal-operator -o \
      jsonpath='{.spec.replicas}/{.status.updatedReplicas}/{.status.readyReplicas}/{.status.currentRevision}/{.status.updateRevision}')
    IFS=/ read -r want updated ready current update <<<"$state"
    if [ "${updated:-0}" = "$want" ] && [ "${ready:-0}" -ge 1 ] && [ "$current" = "$update" ]; then
      log "operator Ready ($ready of $want replicas Ready)"; return
    fi
    sleep 1
  done
  kube -n rayjournal-system get pods -o wide >&2 || true
  kube -n rayjournal-system logs statefulset/rayjournal-operator --tail=40 >&2 || true
  log "the operator's StatefulSet was not Ready within 240 s"; exit 1
}

case "${1:-}" in
  up)
    bash scripts/setup-deps.sh containerd runc containernetworking-plugins conntrack iptables \
      iproute2 openssl podman mmdebstrap >&2
    bash scripts/build-control-plane.sh kubernetes >&2
    bash scripts/build-control-plane.sh etcd >&2
    bash scripts/build-control-plane.sh node >&2
    cluster up ;;
  install-operator) shift; install_operator "$@" ;;
  images)
    shift
    [ $# -gt 0 ] || set -- "${NODE_IMAGES[@]}"
    bash scripts/node/build-images.sh "$@"
    cluster load-image "$@" ;;
  down | status | leftovers | load-image | alias-image) cluster "$@" ;;
  -h | --help | help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
