#!/usr/bin/env bash
# Installs dependencies (idempotent) and builds into build/ (or $BUILD_DIR, with extra cmake args).
# TARGETS="rayjournal-operator rayjournal-replay" builds only those (the demo's); default: all.
# A build that is already there costs seconds: the package check, a configure and a no-op ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
read -r -a targets <<<"${TARGETS:-all}"
cmake --build "$build_dir" --target "${targets[@]}"
