#!/usr/bin/env bash
# Debian packages only the tests need (not the build or the image): Chromium, the real browser
# that renders rayjournal-replay's HTML timeline (tests/scenario/timeline_html_test.py), and
# tmux, the real terminal the live table is read from (tests/scenario/live_table_test.py).
set -euo pipefail
exec bash "$(dirname "$0")/setup-deps.sh" chromium tmux
