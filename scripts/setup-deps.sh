#!/usr/bin/env bash
# Installs the Debian packages rayjournal builds and tests with. Idempotent: a package that is
# already installed is not installed again, and apt-get update runs only when something is missing.
# With arguments it installs those packages instead (scripts/build-image.sh); with --and PKG...
# the build's packages and those, in one apt-get run (scripts/setup-test-deps.sh).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  librocksdb-dev libboost-dev libssl-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libcli11-dev libyaml-cpp-dev libjemalloc-dev libsimdjson-dev
  zlib1g-dev libbz2-dev liblz4-dev libsnappy-dev libzstd-dev
  openssl python3-venv
)
if [ "${1:-}" = --and ]; then
  shift
  packages+=("$@")
elif [ $# -gt 0 ]; then
  packages=("$@")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
