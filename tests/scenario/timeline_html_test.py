#!/usr/bin/env python3
"""rayjournal-replay timeline --html, rendered in a real headless browser (Chromium from Debian):
a RayJob that retried across an operator restart (SIGKILL mid-run) shows one lane per attempt,
the restart as a band, one bar per intent, and a table row per record; the page fetches nothing.
Usage: timeline_html_test.py OPERATOR REPLAY SAMPLES_DIR [SCREENSHOT.png]"""
import json, os, re, shutil, signal, subprocess, sys, tempfile, time

operator, replay, samples = sys.argv[1:4]
screenshot = sys.argv[4] if len(sys.argv) > 4 else None
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    sys.exit("FAIL: no chromium on PATH (scripts/setup-test-deps.sh installs it)")
work = tempfile.mkdtemp(prefix="rayjournal-html-")
journal, cluster = os.path.join(work, "journal"), os.path.join(work, "cluster")
base = [operator, "--journal-dir", journal, "--cluster-dir", cluster, "--no-progress",
        "--log-level", "warn", "--requeue-ms", "300"]
target = "default/rayjob-retry"

def records():
    r = subprocess.run([replay, "--journal", journal, "-o", "json", "timeline", target],
                       capture_output=True, text=True)
    return [json.loads(l) for l in r.stdout.splitlines()] if r.returncode == 0 else []

# Kill the operator once the retrying RayJob's first cluster is intended: its history then
# spans two operator runs.
p = subprocess.Popen(base + ["--apply", samples])
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not any(
        r["type"] == "Intent" and r["body"].get("action") == "CreateRayCluster" for r in records()):
    time.sleep(0.05)
p.send_signal(signal.SIGKILL)
p.wait()
assert subprocess.run(base + ["--exit-when-idle", "--timeout", "120"]).returncode == 0

history = records()
epochs = {r["epoch"] for r in history}
attempts = {r["attempt"] for r in history}
intents = [r for r in history if r["type"] == "Intent"]
failures = []
if len(epochs) < 2:
    failures.append(f"the RayJob's records span one operator run only: {epochs}")
page = os.path.join(work, "timeline.html")
w = subprocess.run([replay, "--journal", journal, "timeline", target, "--html", page],
                   capture_output=True, text=True)
if w.returncode != 0:
    sys.exit(f"FAIL: timeline --html exit {w.returncode}: {w.stdout} {w.stderr}")
source = open(page).read()
if re.search(r'(src|href)="(https?:)?//', source):
    failures.append("the page references something outside itself")
flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
dom = subprocess.run(flags + ["--dump-dom", "file://" + page], capture_output=True, text=True,
                     timeout=120).stdout
def count(cls):
    return len(re.findall(r'class="' + cls + r'[" ]', dom))
checks = [
    ("rendered", f'data-rendered="{len(history)}"' in dom),
    ("one lane per attempt", count("lane") == len(attempts) == 2),
    ("a restart band per later operator run", count("restart") == len(epochs) - 1),
    ("one bar per intent", count("bar") == len(intents)),
    ("a table row per record", len(re.findall(r'<tr id="seq-', dom)) == len(history)),
    ("a bar's record on hover", "<title>#" in dom),
]
failures += [f"{what}: lanes={count('lane')} restarts={count('restart')} bars={count('bar')} "
             f"(attempts {len(attempts)}, epochs {len(epochs)}, intents {len(intents)})"
             for what, ok in checks if not ok]
# report --html: the whole journal, a lane per RayJob and RayCluster, every operator run's
# restart, every intent.
report = os.path.join(work, "report.html")
w = subprocess.run([replay, "--journal", journal, "report", "--html", report], capture_output=True, text=True)
if w.returncode != 0:
    sys.exit(f"FAIL: report --html exit {w.returncode}: {w.stdout} {w.stderr}")
every = [json.loads(l) for l in subprocess.run([replay, "--journal", journal, "export"],
                                               capture_output=True, text=True).stdout.splitlines()]
objects = {(r["object"]["kind"], r["object"]["namespace"], r["object"]["name"])
           for r in every if r.get("object") and r["object"].get("kind") in ("RayJob", "RayCluster")}
dom = subprocess.run(flags + ["--dump-dom", "file://" + report], capture_output=True, text=True,
                     timeout=120).stdout
run_epochs = {r["epoch"] for r in every}
for what, ok in [("report: a lane per RayJob and RayCluster", count("lane") == len(objects)),
                 ("report: a band per restart", count("restart") == len(run_epochs) - 1),
                 ("report: a bar per intent", count("bar") == sum(r["type"] == "Intent" for r in every))]:
    if not ok:
        failures.append(f"{what}: lanes={count('lane')} restarts={count('restart')} bars={count('bar')} "
                        f"objects={len(objects)} epochs={len(run_epochs)}")
if screenshot and not failures:
    subprocess.run(flags + [f"--screenshot={screenshot}", "--window-size=1140,420",
                            "--hide-scrollbars", "file://" + page],
                   capture_output=True, timeout=120, check=True)
print("\n".join(failures) if failures else "timeline html ok")
if not failures:
    shutil.rmtree(work)
sys.exit(1 if failures else 0)
