"""KubeRay v1.7.0's RayJob samples, applied unchanged, each alone, to the embedded operator:
every one reaches the final state KubeRay's documentation gives it. Usage:
kuberay_samples_test.py OPERATOR SAMPLES_DIR"""

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

OPERATOR, SAMPLES = sys.argv[1:3]

# sample file -> {RayJob name (a generateName prefix ends in "-"): (jobDeploymentStatus, jobStatus)}
# None: the RayJob deletes itself (its deletion rules end with DeleteSelf).
COMPLETE = ("Complete", "SUCCEEDED")
EXPECTED = {
    "ray-job.batch-inference.yaml": {"rayjob-sample": COMPLETE},
    "ray-job.custom-head-svc.yaml": {"rayjob-sample": COMPLETE},
    "ray-job.deletion-rules.yaml": {"rayjob-deletion-rules": None},
    "ray-job.interactive-mode.yaml": {"rayjob-interactive-mode": ("Waiting", "")},
    "ray-job.kueue-toy-sample.yaml": {"rayjob-sample-": COMPLETE},
    "ray-job.light-weight-submitter.yaml": {"rayjob-light-weight-submitter": COMPLETE},
    "ray-job.platform-events.yaml": {"rayjob-platform-events": COMPLETE},
    "ray-job.resources.yaml": {"rayjob-sample": COMPLETE},
    "ray-job.sample.yaml": {"rayjob-sample": COMPLETE},
    "ray-job.sandbox.yaml": {"rayjob-sandbox": COMPLETE},
    "ray-job.shutdown.yaml": {"rayjob-sample-shutdown": COMPLETE},
    "ray-job.sidecar-mode.yaml": {"rayjob-sidecar-mode": COMPLETE},
    "ray-job.tpu-jax.yaml": {"rayjob-tpu-jax": COMPLETE},
    "ray-job.tpu-v6e-16-multihost.yaml": {"v6e-16-job": COMPLETE},
    "ray-job.tpu-v6e-256-multihost.yaml": {"v6e-256-job": COMPLETE},
    "ray-job.tpu-v6e-singlehost.yaml": {"v6e-4-job": COMPLETE},
    "ray-job.use-existing-raycluster.yaml": {"rayjob-use-existing-raycluster": COMPLETE},
    "ray-job.volcano-scheduler-queue.yaml": {"rayjob-sample-0": COMPLETE},
    "ray-job.yunikorn-scheduler.yaml": {"rayjob-yunikorn-0": COMPLETE},
}
# Samples whose final state is reached long before their scheduled cleanup (sandbox keeps its
# cluster for ttlSecondsAfterFinished: 600): checked after this many seconds, not at idleness.
CHECKED_AFTER = {"ray-job.sandbox.yaml": 20}
# What a sample needs to exist first (KubeRay's docs create it before applying the sample).
PREREQUISITES = {
    "ray-job.use-existing-raycluster.yaml": ["fixtures/ray-cluster-kuberay.yaml"],
}


def run_sample(sample, work):
    summary = os.path.join(work, "summary.json")
    applies = [f"--apply={os.path.join(SAMPLES, p)}" for p in PREREQUISITES.get(sample, [])]
    run = subprocess.run([OPERATOR, *applies, f"--apply={os.path.join(SAMPLES, sample)}",
                          f"--journal-dir={work}/journal", f"--cluster-dir={work}/cluster",
                          "--exit-when-idle", "--timeout", str(CHECKED_AFTER.get(sample, 120)),
                          "--no-progress",
                          "--requeue-ms", "300", "--summary-json", summary],
                         capture_output=True, text=True)
    timed_out_as_planned = sample in CHECKED_AFTER and run.returncode == 4
    if run.returncode != 0 and not timed_out_as_planned:
        return [f"{sample}: operator exited {run.returncode}:\n{run.stderr[-2000:]}"]
    jobs = {j["name"]: j for j in json.load(open(summary))}
    failures = []
    for name, want in EXPECTED[sample].items():
        found = [j for n, j in jobs.items() if n == name or (name.endswith("-") and
                                                              n.startswith(name))]
        if want is None:
            if found:
                failures.append(f"{sample}: {name} should have deleted itself, is {found[0]}")
            continue
        got = found and (found[0]["jobDeploymentStatus"], found[0]["jobStatus"])
        if got != want:
            failures.append(f"{sample}: {name} expected {want}, got {got or 'no RayJob'}")
    return failures


samples = sorted(f for f in os.listdir(SAMPLES) if f.startswith("ray-job.") and f.endswith(".yaml"))
failures = []
if set(samples) != set(EXPECTED):
    failures.append(f"samples without an expectation, or expected but missing: "
                    f"{sorted(set(samples) ^ set(EXPECTED))}")
with tempfile.TemporaryDirectory() as root:
    def one(sample):
        work = os.path.join(root, sample)
        os.makedirs(work)
        return run_sample(sample, work)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for result in pool.map(one, samples):
            failures.extend(result)
if failures:
    sys.exit("\n".join(failures))
print(f"{len(samples)} KubeRay v1.7.0 RayJob samples reached their final states")
