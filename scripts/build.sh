#!/usr/bin/env bash
# Installs dependencies (idempotent) and builds into build/ (or $BUILD_DIR with extra cmake args).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build_dir"
