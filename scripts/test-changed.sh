#!/usr/bin/env bash
# Only what you touched: rebuilds build/ and runs every test that runs a binary this rebuild
# relinked, or a test script changed since HEAD (git diff and untracked files): ctest says what each
# test runs (--show-only=json-v1), so the choice follows the build graph, not file names. A change to
# src/wal/ reruns the journal's tests and every test of a program that links the journal; a change
# to one scenario script reruns that script. The e2e tier is left out unless E2E=1 (it needs the
# control plane: scripts/build-control-plane.sh). Extra arguments go to ctest (-LE crash, -j1).
#   BUILD_DIR=build-sanitize bash scripts/test-changed.sh    the same in the ASan build
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
[ -f "$build_dir/build.ninja" ] || { echo "test-changed: no $build_dir yet: run scripts/build.sh first" >&2; exit 2; }
cmake "$build_dir" >/dev/null
relinked=$(ninja -C "$build_dir" -n | sed -n 's|.*Linking CXX executable bin/\([A-Za-z0-9_.-]*\)$|\1|p')
scripts=$({ git diff --name-only HEAD; git ls-files --others --exclude-standard; } |
  { grep -E '^(tests|bench)/.*\.py$' || true; } | xargs -r -n1 basename | sort -u)
cmake --build "$build_dir"
tests=$(cd "$build_dir" && ctest --show-only=json-v1 | E2E=${E2E:-0} python3 -c '
import json, os, re, sys
touched = set(sys.argv[1:])
chosen = []
for t in json.load(sys.stdin)["tests"]:
    labels = next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
    if "e2e" in labels and os.environ["E2E"] != "1":
        continue
    if touched & {os.path.basename(a) for a in t.get("command", [])}:
        chosen.append(re.sub(r"([][.*+?^$(){}|\\])", r"\\\1", t["name"]))
print("|".join(chosen))' $relinked $scripts)
if [ -z "$tests" ]; then
  echo "test-changed: nothing relinked and no test script changed since HEAD: no test to run"
  exit 0
fi
echo "test-changed: relinked: ${relinked:-none}; scripts: ${scripts:-none}; $(echo "$tests" | tr '|' '\n' | wc -l) tests"
cd "$build_dir"
exec ctest --output-on-failure -j2 -R "^($tests)\$" "$@"
