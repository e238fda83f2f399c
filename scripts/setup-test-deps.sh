#!/usr/bin/env bash
# The build's Debian packages and those only the tests need, in one apt-get run: Chromium, the real
# browser that renders rayjournal-replay's HTML timeline (tests/scenario/timeline_html_test.py);
# tmux, the real terminal the live table is read from (tests/scenario/live_table_test.py); podman,
# runc and mmdebstrap, which build and run the operator image (scripts/build-image.sh, e2e.image);
# iproute2 and wget for the kubelet stand-in of tests/kuberay-e2e (Pod network namespaces, probes).
set -euo pipefail
exec bash "$(dirname "$0")/setup-deps.sh" --and chromium tmux podman runc mmdebstrap iproute2 wget
