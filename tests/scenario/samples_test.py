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
    if failures:
        sys.exit("\n".join(failures))
    print(f"{len(EXPECTED) + len(GONE)} samples reached their documented final states")
