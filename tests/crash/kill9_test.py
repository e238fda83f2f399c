#!/usr/bin/env python3
"""Runs the real rayjournal-operator on the embedded cluster with 200 RayJobs, kills it with
SIGKILL at random moments (seeded), restarts it each time, then lets it finish and checks from
the outside: every RayJob reaches the expected final state with the expected attempt counts,
and no RayCluster, submitter Job or Ray submission was created twice for one attempt."""
import collections, json, os, random, shutil, signal, subprocess, sys, tempfile, time

operator, = sys.argv[1:2]
seed = int(os.environ.get("KILL_SEED", "7"))
kills = int(os.environ.get("KILLS", "20"))
rng = random.Random(seed)
work = tempfile.mkdtemp(prefix="rayjournal-kill9-")
manifests = os.path.join(work, "manifests")
os.makedirs(manifests)

HEAD = """  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.46.0
"""
expected = {}
for i in range(200):
    kind = ["success", "retry", "http"][i % 3]
    name = f"job-{kind}-{i:03d}"
    result = "FAILED,SUCCEEDED" if kind == "retry" else "SUCCEEDED"
    mode = "HTTPMode" if kind == "http" else "K8sJobMode"
    dur = rng.choice(["200ms", "500ms", "900ms"])
    with open(os.path.join(manifests, name + ".yaml"), "w") as f:
        f.write(f"""apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {name}
  annotations:
    rayjournal.io/sim-duration: "{dur}"
    rayjournal.io/sim-result: "{result}"
spec:
  entrypoint: python -c "print(1)"
  submissionMode: {mode}
  backoffLimit: 2
{HEAD}""")
    expected[name] = ("Complete", "SUCCEEDED", 1 if kind == "retry" else 0, 1)

args = [operator, "--journal-dir", os.path.join(work, "journal"), "--cluster-dir", os.path.join(work, "cluster"),
        "--no-progress", "--requeue-ms", "500", "--log-level", "warn", "--workers", "4"]
log = open(os.path.join(work, "operator.log"), "w")
proc = subprocess.Popen(args + ["--apply", manifests], stdout=log, stderr=log)
for k in range(kills):
    time.sleep(rng.uniform(0.2, 1.2))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc = subprocess.Popen(args, stdout=log, stderr=log)
proc.send_signal(signal.SIGKILL)
proc.wait()
summary = os.path.join(work, "summary.json")
final = subprocess.run(args + ["--exit-when-idle", "--timeout", "300", "--summary-json", summary], stdout=log, stderr=log)
failures = []
if final.returncode != 0:
    failures.append(f"final run exited {final.returncode}")
jobs = {j["name"]: j for j in json.load(open(summary))} if os.path.exists(summary) else {}
for name, (dep, st, failed, succeeded) in expected.items():
    j = jobs.get(name)
    got = j and (j["jobDeploymentStatus"], j["jobStatus"], j["failed"], j["succeeded"])
    if got != (dep, st, failed, succeeded):
        failures.append(f"{name}: expected {(dep, st, failed, succeeded)}, got {got}")

creates = collections.Counter()
for line in open(os.path.join(work, "cluster", "history.jsonl")):
    e = json.loads(line)
    if e["kind"] in ("RayCluster", "Job", "SimRaySubmission"):
        creates[(e["kind"], e["namespace"], e["name"])] += 1
for key, n in creates.items():
    if n > 1 and key[0] != "Job":  # the submitter Job is named after the RayJob: one per attempt
        failures.append(f"{key} created {n} times")
for name, (_, _, failed, _) in expected.items():
    want = 0 if name.startswith("job-http") else failed + 1
    if creates[("Job", "default", name)] != want:
        failures.append(f"{name}: {creates[('Job', 'default', name)]} submitter Jobs for {want} attempts")
clusters = collections.Counter(k[2].rsplit("-", 1)[0] for k in creates if k[0] == "RayCluster")
for name, (_, _, failed, _) in expected.items():
    if clusters[name] != failed + 1:
        failures.append(f"{name}: {clusters[name]} RayClusters for {failed + 1} attempts")
subs = collections.Counter(k[2].split(".")[0].rsplit("-", 1)[0] for k in creates if k[0] == "SimRaySubmission")
for name, (_, _, failed, _) in expected.items():
    if subs[name] != failed + 1:
        failures.append(f"{name}: {subs[name]} Ray submissions for {failed + 1} attempts")

print(f"kill9: seed {seed}, {kills} kills, {len(jobs)} RayJobs, {sum(creates.values())} creates checked")
if failures:
    print("\n".join(failures[:50]))
    print(f"work dir kept: {work}")
    print("0 passed, 1 failed")
    sys.exit(1)
shutil.rmtree(work)
print("1 passed, 0 failed")
