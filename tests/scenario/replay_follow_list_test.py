#!/usr/bin/env python3
"""rayjournal-replay timeline --follow and list against the running operator on the embedded
cluster: the follow prints the records the operator journals after it started, in order and
none twice, and ends by itself once the RayJob is deleted; list shows every RayJob, deleted
ones included, and its filters keep what they say."""
import json, os, shutil, subprocess, sys, tempfile, time

operator, replay, samples = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="rayjournal-follow-")
journal, cluster = os.path.join(work, "journal"), os.path.join(work, "cluster")
failures = []

def check(cond, what):
    if not cond:
        failures.append(what)

def run(*args):
    return subprocess.run([replay, *args, "--journal", journal], capture_output=True, text=True)

def records(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]

def finalizer_removed(recs):
    return any(r.get("type") == "Outcome" and r.get("body", {}).get("action") == "RemoveFinalizer"
               for r in recs)

# A RayJob that deletes itself 6 s after it succeeds: long enough to start following it first.
manifest = os.path.join(work, "rayjob-follow.yaml")
with open(manifest, "w") as f:
    f.write("""apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-follow
  namespace: team-a
  annotations:
    rayjournal.io/sim-duration: "1s"
spec:
  entrypoint: python -c "print('followed')"
  deletionStrategy:
    deletionRules:
      - policy: DeleteSelf
        condition:
          jobStatus: SUCCEEDED
          ttlSeconds: 6
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.46.0
""")

op = subprocess.Popen([operator, "--journal-dir", journal, "--cluster-dir", cluster, "--no-progress",
                       "--log-level", "warn", "--requeue-ms", "300", "--apply", samples, manifest,
                       "--exit-when-idle", "--timeout", "120"])
deadline = time.monotonic() + 60
before = []
while time.monotonic() < deadline and not any(r["type"] == "Intent" for r in before):
    before = records(run("-o", "json", "timeline", "team-a/rayjob-follow").stdout)
    time.sleep(0.05)
if finalizer_removed(before) or not before:
    op.kill()
    sys.exit("FAIL: rayjob-follow was %s before the follow began" % ("deleted" if before else "never journaled"))

follow = subprocess.Popen([replay, "timeline", "team-a/rayjob-follow", "--follow", "-o", "json",
                           "--journal", journal], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
try:
    out, err = follow.communicate(timeout=90)
except subprocess.TimeoutExpired:
    follow.kill()
    out, err = follow.communicate()
    failures.append("the follow did not end after the RayJob was deleted:\n" + out[-2000:] + err)
followed = records(out)
seqs = [r["seq"] for r in followed]
check(follow.returncode == 0, f"follow exit {follow.returncode}: {err}")
check(seqs == sorted(set(seqs)), "the follow printed records out of order or twice")
check(seqs[:len(before)] == [r["seq"] for r in before], "the follow's first page is not the timeline")
check(len(seqs) > len(before) and finalizer_removed(followed[len(before):]),
      "the follow did not print the records journaled after it began, up to the deletion")

if op.wait(timeout=150) != 0:
    sys.exit("FAIL: the operator did not finish")
final = [r["seq"] for r in records(run("-o", "json", "timeline", "team-a/rayjob-follow").stdout)]
check(seqs == final, f"what was followed differs from the journal's timeline:\n{seqs}\n{final}")
text = run("timeline", "team-a/rayjob-follow", "-f")
check(text.returncode == 0 and "its history ends here" in text.stdout,
      "a follow of an already deleted RayJob does not end at once:\n" + text.stdout)

listed = run("list", "-o", "json")
runs = {r["name"]: r for r in json.loads(listed.stdout)["runs"]} if listed.returncode == 0 else {}
sample_names = {n[:-5] for n in os.listdir(samples) if n.endswith(".yaml")}
check(set(runs) == sample_names | {"rayjob-follow"}, f"list: {sorted(runs)}")
deleted = run("list", "--deleted", "-o", "json")
check({r["name"] for r in json.loads(deleted.stdout)["runs"]} == {"rayjob-follow", "rayjob-deletion-rules"},
      "list --deleted:\n" + deleted.stdout)
failed = json.loads(run("list", "--status", "failed", "-o", "json").stdout)["runs"]
check([(r["name"], r["reason"], r["attempts"]) for r in failed] == [("rayjob-failed", "AppFailed", 2)],
      f"list --status failed: {failed}")
team = run("list", "-n", "team-a")
check(team.returncode == 0 and "rayjob-follow" in team.stdout and "rayjob-success" not in team.stdout,
      "list -n team-a:\n" + team.stdout)
future = run("list", "--since", "2099-01-01T00:00:00Z")
check(future.returncode == 0 and "no RayJob matches" in future.stdout, "list --since the future:\n" + future.stdout)
recent = json.loads(run("list", "--since", "1h", "-o", "json").stdout)["runs"]
check(len(recent) == len(runs), f"list --since 1h kept {len(recent)} of {len(runs)}")
bad = run("list", "--since", "yesterday")
check(bad.returncode == 2, f"list --since yesterday: exit {bad.returncode}")

shutil.rmtree(work, ignore_errors=True)
if failures:
    sys.exit("FAIL:\n" + "\n".join(failures))
print("ok: follow and list")
