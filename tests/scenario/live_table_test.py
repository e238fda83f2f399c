#!/usr/bin/env python3
"""The embedded demo as a user sees it: the operator under a real pseudo-terminal (tmux), its
screen captured at the end: one row per sample RayJob, no decision log line on the screen, the
closing notes and next commands; an 80-column terminal drops columns instead of wrapping, and
NO_COLOR leaves out colour. Off a terminal: no redraw, no escape codes, plain progress lines.
Usage: live_table_test.py OPERATOR SAMPLES_DIR"""
import json, os, re, shutil, subprocess, sys, tempfile, time

operator, samples = sys.argv[1:3]
tmux = shutil.which("tmux")
if not tmux:
    sys.exit("FAIL: no tmux on PATH (scripts/setup-test-deps.sh installs it)")
work = tempfile.mkdtemp(prefix="rayjournal-live-")
failures = []

def screen_of(width, env=""):
    data = os.path.join(work, f"data-{width}")
    session = f"rjlive{os.getpid()}{width}"
    # A tmux server of its own per screen: a new session on a server that is exiting because its
    # last session was just killed fails with "server exited unexpectedly".
    tm = [tmux, "-L", session, "-f", "/dev/null"]
    cmd = (f"{env} {operator} --journal-dir {data}/journal --cluster-dir {data}/cluster "
           f"--apply {samples} --exit-when-idle --timeout 120 --requeue-ms 300 "
           f"--summary-json {data}/summary.json; echo EXIT=$?; sleep 600")
    subprocess.run(tm + ["new-session", "-d", "-s", session, "-x", str(width), "-y", "60", cmd], check=True)
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            shot = subprocess.run(tm + ["capture-pane", "-p", "-e", "-t", session],
                                  capture_output=True, text=True).stdout
            if "EXIT=" in shot:
                return shot, data
            time.sleep(0.5)
        failures.append(f"{width} columns: the operator did not finish")
        return shot, ""
    finally:
        subprocess.run(tm + ["kill-server"], capture_output=True)

shot, data = screen_of(160)
log = os.path.join(data, "operator.log")
names = sorted(j["name"] for j in json.load(open(os.path.join(data, "summary.json"))))
plain = re.sub(r"\x1b\[[0-9;]*m", "", shot)
rows = [l for l in plain.splitlines() if re.match(r"^default/\S+\s", l)]
if any(len(l) > 160 for l in plain.splitlines()):
    failures.append("a line is wider than the terminal")
if sorted(r.split()[0].split("/")[1] for r in rows) != names:
    failures.append(f"one row per sample RayJob expected {names}, screen:\n{plain}")
if "EXIT=0" not in plain:
    failures.append("exit code not 0:\n" + plain)
if re.search(r"\[(info|debug)\]", plain):
    failures.append("a decision log line reached the screen:\n" + plain)
for want in ["NAMESPACE/NAME", "DEPLOYMENT STATUS", "What happened:", "Try next:",
             "default/rayjob-deletion-rules was deleted during the run",
             "rayjournal-replay --journal", "timeline default/rayjob-retry", "kill -9"]:
    if want not in plain:
        failures.append(f"'{want}' is not on the screen:\n{plain}")
if "\x1b[32m" not in shot:
    failures.append("no colour for Complete on a colour terminal")
if not log or "RayJob default/rayjob-retry" not in open(log).read():
    failures.append(f"the decision log is not in {log}")

narrow, _ = screen_of(80, "NO_COLOR=1")
nplain = re.sub(r"\x1b\[[0-9;]*m", "", narrow)
if "RAYCLUSTER" in nplain or "DEPLOYMENT STATUS" not in nplain:
    failures.append("80 columns: RAYCLUSTER should be dropped, DEPLOYMENT STATUS kept:\n" + nplain)
if "\x1b[32m" in narrow:
    failures.append("NO_COLOR: colour on the screen")
if any(len(l) > 80 for l in nplain.splitlines() if re.match(r"^default/", l)):
    failures.append("80 columns: a table row wraps")

# Off a terminal: plain lines, no redraw, no colour.
data = os.path.join(work, "data-pipe")
off = subprocess.run([operator, "--journal-dir", f"{data}/journal", "--cluster-dir", f"{data}/cluster",
                      "--apply", samples, "--exit-when-idle", "--timeout", "120", "--requeue-ms", "300"],
                     capture_output=True, text=True)
if off.returncode != 0 or "\x1b[" in off.stdout or "progress: default/rayjob-retry" not in off.stderr:
    failures.append(f"off a terminal: exit {off.returncode}, stdout {off.stdout[:300]!r}")

print("\n".join(failures) if failures else "live table ok")
if not failures:
    shutil.rmtree(work)
sys.exit(1 if failures else 0)
