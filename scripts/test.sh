#!/usr/bin/env bash
# The whole test suite: installs what it needs (Debian packages, the control plane built from Go
# modules, Ray from PyPI, Chromium for the HTML timeline test), builds, runs the unit, scenario and crash tiers with ctest, then the
# e2e tier alone (a real Ray head must not start while the CPU is busy), then the unit and
# scenario tiers again under AddressSanitizer + UndefinedBehaviorSanitizer, and once more under
# ThreadSanitizer (the journal, informer cache, workqueue, Controller and Stack are concurrent).
# LABELS='unit|scenario' limits the tiers; SANITIZE=0 skips both sanitizer passes.
set -euo pipefail
cd "$(dirname "$0")/.."
labels=${LABELS:-unit|scenario|crash|e2e}
bash scripts/build.sh
bash scripts/setup-test-deps.sh
if [[ "$labels" == *e2e* ]]; then
  bash scripts/build-control-plane.sh
  bash bench/compare-kuberay/build.sh  # KubeRay and bench-world for e2e.compare_kuberay_smoke
fi
other=$(echo "$labels" | tr '|' '\n' | grep -vx e2e | paste -sd '|' || true)
if [ -n "$other" ]; then
  (cd build && ctest --output-on-failure --timeout 900 -j2 -L "$other")
fi
if [[ "$labels" == *e2e* ]]; then
  (cd build && ctest --output-on-failure --timeout 1500 -L e2e)
fi
if [ "${SANITIZE:-1}" = 1 ]; then
  BUILD_DIR=build-sanitize BUILD_TYPE=Debug bash scripts/build.sh -DRAYJOURNAL_SANITIZE=ON
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 900 -j2 -L 'unit|scenario')
fi
if [ "${SANITIZE:-1}" = 1 ]; then
  BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo bash scripts/build.sh -DRAYJOURNAL_TSAN=ON
  (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/tsan.supp" \
    ctest --output-on-failure --timeout 900 -j2 -L 'unit|scenario')
fi
