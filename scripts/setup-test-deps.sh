#!/usr/bin/env bash
# Debian packages only the tests need (not the build or the image): Chromium, the real browser
# that renders rayjournal-replay's HTML timeline (tests/scenario/timeline_html_test.py), and
# tmux, the real terminal the live table is read from (tests/scenario/live_table_test.py).
# Idempotent, as scripts/setup-deps.sh.
set -euo pipefail
packages=(chromium tmux)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && { echo "setup-test-deps: all ${#packages[@]} packages present"; exit 0; }
echo "setup-test-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
