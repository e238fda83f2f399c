#!/usr/bin/env bash
# Regenerates tests/kuberay-diff/golden/*.json from KubeRay's own code: the Pods KubeRay's
# RayCluster reconciler builds for each case in cases/ (rayjournal_golden_test.go), and Volcano's
# PodGroups and Pod fields for each case in volcano/ (rayjournal_volcano_golden_test.go), and
# YuniKorn's Pod fields for each case in yunikorn/ (rayjournal_yunikorn_golden_test.go), all run
# inside a copy of KubeRay's ray-operator. KubeRayDiffTest (controller_test) compares them with what
# rayjournal builds from the same cases. Run after adding a case or moving the pinned version:
#   bash tests/kuberay-diff/generate.sh [--git KUBERAY_GIT_DIR]
# KubeRay v1.7.0 comes from the Go module proxy when it serves the module whole, else from a
# KubeRay git repository (--git, or $KUBERAY_GIT) at tag v1.7.0; its dependencies come from the
# module proxy either way. Needs Go >= 1.26.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
version=${KUBERAY_VERSION:-v1.7.0}
git_dir=${KUBERAY_GIT:-}
[ "${1:-}" = "--git" ] && git_dir=$2
log() { echo "kuberay-diff: $*" >&2; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
if [ -n "$git_dir" ]; then
  log "KubeRay $version from $git_dir"
  git --git-dir="$git_dir" archive "$version" ray-operator | tar -x -C "$work"
else
  dir=$(go mod download -json "github.com/ray-project/kuberay/ray-operator@$version" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("Dir",""))') || {
    log "the module proxy does not serve ray-operator@$version; pass --git KUBERAY_GIT_DIR"
    exit 2
  }
  cp -r "$dir" "$work/ray-operator"
fi
cp rayjournal_golden_test.go "$work/ray-operator/controllers/ray/"
cp rayjournal_volcano_golden_test.go "$work/ray-operator/controllers/ray/batchscheduler/volcano/"
cp rayjournal_yunikorn_golden_test.go "$work/ray-operator/controllers/ray/batchscheduler/yunikorn/"
rm -f golden/*.json
cd "$work/ray-operator"
RAYJOURNAL_DIFF_CASES="$here/cases" RAYJOURNAL_DIFF_VOLCANO="$here/volcano" \
  RAYJOURNAL_DIFF_YUNIKORN="$here/yunikorn" RAYJOURNAL_DIFF_GOLDEN="$here/golden" \
  RAYJOURNAL_DIFF_KUBERAY="$version" ENABLE_DETERMINISTIC_HEAD_POD_NAME=true \
  go test ./controllers/ray ./controllers/ray/batchscheduler/volcano ./controllers/ray/batchscheduler/yunikorn \
  -run '^TestRayjournal(Volcano|YuniKorn)?Golden$' \
  -count=1 -v | grep -E "written|FAIL|ok|panic" >&2
log "$(ls "$here/golden" | wc -l) golden files from KubeRay $version"
