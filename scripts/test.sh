#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (Debian packages, the control
# plane and KubeRay built from Go modules, Ray from PyPI, Chromium, podman and the operator image),
# builds, and runs every tier:
#   1. all Debian packages in one apt-get run;
#   2. the builds: the e2e tier's components (scripts/build-control-plane.sh with the real node's
#      kubelet, scheduler, kube-proxy, CoreDNS and provisioner, KubeRay and bench-world,
#      scripts/build-image.sh, the node's images) in the background, beside the three C++ builds one
#      after another (build/, then build-sanitize/ with AddressSanitizer + UndefinedBehaviorSanitizer,
#      then build-tsan/ with ThreadSanitizer): the downloads overlap the compiler, and each side
#      fills the CPU the other leaves idle;
#   3. the tests, one pass at a time, nothing building beside them: the unit, scenario and crash
#      tiers; the e2e tier alone (a real Ray head must not start while the CPU is busy); the unit
#      and scenario tiers under ASan+UBSan; the same under TSan.
# LABELS='unit|scenario' limits the tiers; SANITIZE=0 skips both sanitizer passes. Each phase's
# time is printed (test.sh: ... N s); the background builds log to .cache/test-logs/.
# Only what you touched: scripts/test-changed.sh (README, "Tests").
set -euo pipefail
cd "$(dirname "$0")/.."
labels=${LABELS:-unit|scenario|crash|e2e}
sanitize=${SANITIZE:-1}
started=$(date +%s)
phase() { echo "test.sh: $* (at $(($(date +%s) - started)) s)"; }
logs=.cache/test-logs
mkdir -p "$logs"

bash scripts/setup-test-deps.sh
phase "packages ready"

components=
# Two chains side by side (the Go builds wait on the module proxy, the images on apt and PyPI),
# then the two images that need both: Ray's reuses the wheels the Ray virtualenv downloaded, and
# KubeRay's holds the manager tests/kuberay-e2e/build.sh built.
build_components() {
  (bash scripts/build-control-plane.sh && bash tests/kuberay-e2e/build.sh) \
    >"$logs/e2e-components-go.log" 2>&1 &
  local go=$!
  (bash scripts/build-image.sh && bash scripts/node/build-images.sh \
    localhost/rayjournal/pause:3.10 localhost/rayjournal/node-helper:bookworm \
    docker.io/library/redis:7.4 docker.io/rancher/curl:latest) >"$logs/e2e-components-images.log" 2>&1 &
  local images=$!
  local failed=0
  wait "$go" || failed=1
  wait "$images" || failed=1
  [ "$failed" = 0 ] && bash scripts/node/build-images.sh docker.io/rayproject/ray:2.60.0 \
    "quay.io/kuberay/operator:$(cat .cache/control-plane/kuberay-e2e/version)" docker.io/kuberay/submitter:nightly \
    >>"$logs/e2e-components-images.log" 2>&1
}
if [[ "$labels" == *e2e* ]]; then
  build_components &
  components=$!
fi
bash scripts/build.sh
phase "build/ built"
# The sanitizer passes run the unit and scenario tiers only, and build only their programs
# (tests/CMakeLists.txt), not the crash simulator and the benchmarks.
if [ "$sanitize" = 1 ]; then
  TARGETS=unit-and-scenario-programs BUILD_DIR=build-sanitize BUILD_TYPE=Debug \
    bash scripts/build.sh -DRAYJOURNAL_SANITIZE=ON
  phase "build-sanitize/ built"
  TARGETS=unit-and-scenario-programs BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo \
    bash scripts/build.sh -DRAYJOURNAL_TSAN=ON
  phase "build-tsan/ built"
fi
if [ -n "$components" ]; then
  if ! wait "$components"; then
    tail -n 40 "$logs/e2e-components-go.log" "$logs/e2e-components-images.log"
    echo "test.sh: building the e2e tier's components failed (whole logs: $logs/e2e-components-*.log)"
    exit 1
  fi
  phase "control plane, real node, KubeRay, Ray and the images ready"
fi

other=$(echo "$labels" | tr '|' '\n' | grep -vx e2e | paste -sd '|' || true)
if [ -n "$other" ]; then
  (cd build && ctest --output-on-failure --timeout 900 -j2 -L "$other")
  phase "tiers $other passed"
fi
if [[ "$labels" == *e2e* ]]; then
  (cd build && ctest --output-on-failure --timeout 1500 -L e2e)
  phase "e2e passed"
fi
if [ "$sanitize" = 1 ]; then
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 900 -j2 -L 'unit|scenario')
  phase "unit|scenario under ASan+UBSan passed"
  (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/tsan.supp" \
    ctest --output-on-failure --timeout 900 -j2 -L 'unit|scenario')
  phase "unit|scenario under TSan passed"
fi
phase "all passed"
