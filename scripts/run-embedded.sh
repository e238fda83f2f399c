#!/usr/bin/env bash
# The README's first command: installs what it needs, builds, and runs the operator on the
# embedded simulated cluster with the sample RayJobs in deploy/samples until every one is at
# rest. State goes to ./rayjournal-data (journal and cluster); delete it to start over.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec ./build/bin/rayjournal-operator --apply deploy/samples --exit-when-idle --timeout 300 \
  --summary-json rayjournal-data/summary.json "$@"
