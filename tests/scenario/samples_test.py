"""Every manifest in deploy/samples reaches the final state its header comment documents, on the
embedded operator. Usage: samples_test.py OPERATOR SAMPLES_DIR"""

import json
import os
import subprocess
import sys
import tempfile

OPERATOR, SAMPLES = sys.argv[1:3]

# name -> (jobDeploymentStatus, jobStatus, reason, failed, succeeded); None: not checked.
EXPECTED = {
    "rayjob-success": ("Complete", "SUCCEEDED", "", 0, 1),
    "rayjob-http": ("Complete", "SUCCEEDED", "", 0, 1),
    "rayjob-sidecar": ("Complete", "SUCCEEDED", "", 0, 1),
    "rayjob-cluster-selector": ("Complete", "SUCCEEDED", "", 0, 1),
    "rayjob-retry": ("Complete", "SUCCEEDED", "", 1, 1),
    "rayjob-failed": ("Failed", "FAILED", "AppFailed", 2, 0),
    "rayjob-interactive": ("Waiting", "", "", 0, 0),
    "rayjob-suspended": ("Suspended", "", "", 0, 0),
    "rayjob-autoscaling": ("Complete", "SUCCEEDED", "", 0, 1),
}
GONE = {"rayjob-deletion-rules"}  # its last deletion rule deletes the RayJob itself

with tempfile.TemporaryDirectory() as work:
    summary = os.path.join(work, "summary.json")
    run = subprocess.run([OPERATOR, "--apply", SAMPLES, f"--journal-dir={work}/journal",
                          f"--cluster-dir={work}/cluster", "--exit-when-idle", "--timeout", "120",
                          "--no-progress", "--requeue-ms", "300", "--summary-json", summary],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"operator exited {run.returncode}:\n{run.stderr[-3000:]}")
    jobs = {j["name"]: j for j in json.load(open(summary))}
    applied = set()
    for f in os.listdir(SAMPLES):
        if f.endswith(".yaml"):
            applied.add(f[:-5])
    failures = []
    if applied != set(EXPECTED) | GONE:
        failures.append(f"samples without an expectation here: {sorted(applied - set(EXPECTED) - GONE)}")
    for name, (deployment, job_status, reason, failed, succeeded) in EXPECTED.items():
        j = jobs.get(name)
        got = j and (j["jobDeploymentStatus"], j["jobStatus"], j["reason"], j["failed"], j["succeeded"])
        if got != (deployment, job_status, reason, failed, succeeded):
            failures.append(f"{name}: expected {(deployment, job_status, reason, failed, succeeded)}, got {got}")
    for name in GONE:
        if name in jobs:
            failures.append(f"{name}: expected to be deleted by its deletion rules, still there: {jobs[name]}")
    # A manifest with generateName (KubeRay's kueue samples) is named as an API server would.
    generated_dir = os.path.join(work, "generated")
    os.makedirs(generated_dir)
    with open(os.path.join(SAMPLES, "rayjob-success.yaml")) as f:
        text = f.read().replace("  name: rayjob-success\n", "  generateName: rayjob-sample-\n", 1)
    with open(os.path.join(generated_dir, "generated.yaml"), "w") as f:
        f.write(text)
    summary2 = os.path.join(work, "summary2.json")
    run = subprocess.run([OPERATOR, "--apply", generated_dir, f"--journal-dir={work}/journal2",
                          f"--cluster-dir={work}/cluster2", "--exit-when-idle", "--timeout", "120",
                          "--no-progress", "--requeue-ms", "300", "--summary-json", summary2],
                         capture_output=True, text=True)
    named = [j for j in json.load(open(summary2))] if run.returncode == 0 else []
    if (run.returncode != 0 or len(named) != 1 or not named[0]["name"].startswith("rayjob-sample-")
            or named[0]["jobDeploymentStatus"] != "Complete"):
        failures.append(f"generateName manifest: exit {run.returncode}, RayJobs {named}, "
                        f"stderr {run.stderr[-1500:]}")
    if failures:
        sys.exit("\n".join(failures))
    print(f"{len(EXPECTED) + len(GONE)} samples reached their documented final states, "
          "and a generateName manifest was named and completed")
