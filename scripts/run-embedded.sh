#!/usr/bin/env bash
# The README's first command: installs what it needs, builds, and runs the operator on the
# embedded simulated cluster with the sample RayJobs in deploy/samples until every one is at
# rest. State goes to ./rayjournal-data (journal and cluster); delete it to start over.
# It builds only the operator and rayjournal-replay (what the demo and its "Try next" lines run),
# not the tests: about 2 minutes cold on 2 cores, seconds once built.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p rayjournal-data
echo "run-embedded: building rayjournal-operator and rayjournal-replay into build/bin (log: rayjournal-data/build.log)" >&2
if ! TARGETS="rayjournal-operator rayjournal-replay" bash scripts/build.sh >rayjournal-data/build.log 2>&1; then
  tail -n 40 rayjournal-data/build.log >&2
  echo "run-embedded: the build failed; the whole log is rayjournal-data/build.log" >&2
  exit 1
fi
exec ./build/bin/rayjournal-operator --apply deploy/samples --exit-when-idle --timeout 300 \
  --summary-json rayjournal-data/summary.json "$@"
