#!/usr/bin/env python3
"""A full disk is a state, not a crash. The operator runs RayJobs with its journal on a small
tmpfs volume this test mounts (and unmounts): when the volume fills, the operator keeps running,
/readyz turns unready while /healthz and /metrics answer, it says so in the log once (not once
per RayJob), and no side effect executes; when the volume grows it resumes by itself, every
RayJob reaches its final state, and `rayjournal-replay verify` finds no side effect executed
twice. Starting on a full volume exits 6 naming the cause, and the next start after space
returns finds everything. Needs root to mount (skipped, exit 77, otherwise).
Usage: full_disk_test.py OPERATOR REPLAY SAMPLE_RAYJOB_YAML"""
import json, os, re, shutil, subprocess, sys, tempfile, time, urllib.request, urllib.error

operator, replay, sample = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="rayjournal-fulldisk-")
volume = os.path.join(work, "volume")
journal, cluster = os.path.join(volume, "journal"), os.path.join(work, "cluster")
failures = []
# Enough RayJobs that their journal outgrows the 400 KiB volume for certain: 60 were once enough,
# but a record now takes one key instead of two, and 60 could finish before the volume filled.
JOBS = 150


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def sh(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def jobs_manifest(count):
    text = open(sample).read()
    docs = [d for d in text.split("\n---") if "kind: RayJob" in d]
    name = re.search(r"^  name: (\S+)", docs[0], re.M).group(1)
    path = os.path.join(work, "jobs.yaml")
    with open(path, "w") as out:
        for i in range(count):
            out.write(docs[0].replace(f"name: {name}", f"name: fill-{i}", 1) + "\n---\n")
    return path


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def wait_for(predicate, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    check(False, "timed out waiting for " + what)
    return False


os.makedirs(volume)
if os.geteuid() != 0 or sh("mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", volume).returncode:
    print("skipped: mounting a tmpfs volume needs root")
    sys.exit(77)
try:
    manifest = jobs_manifest(JOBS)
    log_path = os.path.join(work, "operator.log")
    summary = os.path.join(work, "summary.json")
    base = [operator, "--journal-dir", journal, "--cluster-dir", cluster, "--no-progress",
            "--log-level", "info", "--requeue-ms", "200"]
    with open(log_path, "w") as log:
        p = subprocess.Popen(base + ["--apply", manifest, "--exit-when-idle", "--timeout", "150",
                                     "--summary-json", summary,
                                     "--metrics-bind-address", "127.0.0.1:0"],
                             stdout=log, stderr=subprocess.STDOUT)
    text = lambda: open(log_path, errors="replace").read()
    port = None
    if wait_for(lambda: re.search(r"on port (\d+)\n", text()), 30, "the status server"):
        port = int(re.search(r"on port (\d+)\n", text()).group(1))
    if wait_for(lambda: "cannot be written (disk full)" in text() or p.poll() is not None, 60,
                "the volume to fill"):
        check(p.poll() is None, "the operator exited on a full disk (%s)" % p.poll())
        if port:
            check(get(port, "/readyz")[0] == 503, "/readyz is not unready on a full disk")
            check(get(port, "/healthz")[0] == 200, "/healthz does not answer on a full disk")
            status, metrics = get(port, "/metrics")
            check(status == 200 and "rayjournal_journal_writable 0" in metrics,
                  "/metrics does not report the journal unwritable")
    time.sleep(2)  # a full disk lasting a while: the log must not flood meanwhile
    check(sh("mount", "-o", "remount,size=64m", volume).returncode == 0, "cannot grow the volume")
    try:
        code = p.wait(timeout=150)
    except subprocess.TimeoutExpired:
        p.kill()
        code = "timeout"
    check(code == 0, f"the operator did not finish after space returned (exit {code})")
    log_text = text()
    check("writable again" in log_text, "no log line saying the journal is writable again")
    check(log_text.count("cannot be written") <= 3,
          "the full disk was logged %d times" % log_text.count("cannot be written"))
    check("reconcile failed" not in log_text, "per-RayJob errors logged for the full disk")
    final = json.load(open(summary)) if os.path.exists(summary) else []
    done = [j for j in final if j.get("jobDeploymentStatus") == "Complete"]
    check(len(done) == JOBS, "%d of %d RayJobs complete" % (len(done), JOBS))
    v = sh(replay, "verify", "--journal", journal)
    check(v.returncode == 0, "verify after the full disk:\n" + v.stdout)

    # Start-up on a full volume: its own exit code, and nothing is lost.
    filler = os.path.join(volume, "filler")
    sh("dd", "if=/dev/zero", "of=" + filler, "bs=64k")
    start = sh(*base, "--exit-when-idle", "--timeout", "30")
    check(start.returncode == 6 and "full" in start.stdout + start.stderr,
          "start on a full disk: exit %d\n%s" % (start.returncode, start.stdout + start.stderr))
    os.remove(filler)
    again = sh(*base, "--exit-when-idle", "--timeout", "60", "--summary-json", summary)
    check(again.returncode == 0, "start after space returned: exit %d\n%s" % (again.returncode, again.stderr[-2000:]))
    final = json.load(open(summary))
    check(sum(j.get("jobDeploymentStatus") == "Complete" for j in final) == JOBS,
          "RayJobs changed after the failed start")
    v = sh(replay, "verify", "--journal", journal)
    check(v.returncode == 0, "verify after the failed start:\n" + v.stdout)
finally:
    sh("umount", "-l", volume)

if failures and os.path.exists(os.path.join(work, "operator.log")):
    print("--- the operator's log, last 80 lines ---")
    print("\n".join(open(os.path.join(work, "operator.log"), errors="replace").read().splitlines()[-80:]))
print("\n".join(failures) if failures else "full disk ok")
if not failures:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
