#!/usr/bin/env bash
# The build's Debian packages and those only the tests need, in one apt-get run: Chromium, the real
# browser that renders rayjournal-replay's HTML timeline (tests/scenario/timeline_html_test.py),
# and chromium-driver with Selenium from PyPI (in .cache/ui-venv), which drive it through the
# history UI (tests/scenario/history_ui_test.py); tmux, the real terminal the live table is read
# from (tests/scenario/live_table_test.py); podman, runc and mmdebstrap, which build and run the
# operator image (scripts/build-image.sh); containerd, the CNI plugins, conntrack, iptables and
# redis-server for the real node (scripts/cluster.sh); iproute2 and wget for the kubelet stand-in of
# tests/kuberay-e2e (Pod network namespaces, probes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh --and chromium chromium-driver tmux podman runc mmdebstrap iproute2 wget \
  containerd containernetworking-plugins conntrack iptables redis-server
selenium=4.35.0  # the newest whose dependencies the index here serves (4.52 wants certifi 2026.10.23)
venv=.cache/ui-venv
if ! "$venv/bin/python" -c "import selenium, sys; sys.exit(selenium.__version__ != '$selenium')" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "selenium==$selenium"
fi
