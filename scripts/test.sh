#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds, runs every tier with ctest, then the
# unit and scenario tiers again under AddressSanitizer + UndefinedBehaviorSanitizer.
# LABELS='unit|scenario' limits the first pass to some tiers; SANITIZE=0 skips the second.
set -euo pipefail
cd "$(dirname "$0")/.."
labels=${LABELS:-unit|scenario|crash|e2e}
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 -j2 -L "$labels")
if [ "${SANITIZE:-1}" = 1 ]; then
  BUILD_DIR=build-sanitize BUILD_TYPE=Debug bash scripts/build.sh -DRAYJOURNAL_SANITIZE=ON
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 900 -j2 -L 'unit|scenario')
fi
