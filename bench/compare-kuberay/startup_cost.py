#!/usr/bin/env python3
"""The operator's fixed CPU cost on a real API server: the harness's control plane with the CRDs,
then the operator started N times (a fresh journal each), its CPU to ready and over 5 s idle.
What a RayJob costs at 100 RayJobs in compare.py includes these once (the operator's CPU is
counted from its start).

  python3 bench/compare-kuberay/startup_cost.py build/bin/rayjournal-operator [runs]
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

IDLE_SECONDS = 5


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary, runs = os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 3
    work = tempfile.mkdtemp(prefix="startup-cost-")
    cp = compare.BenchControlPlane(compare.CACHE, os.path.join(work, "cp"))
    try:
        cp.start()
        compare.apply_crds(cp, "rayjournal")
        for run in range(runs):
            # No Ray dashboard: nothing is submitted, and the operator does not need one to start.
            op = compare.Operator("rayjournal", os.path.join(work, f"operator-{run}"), cp,
                                  "127.0.0.1:1", (), binary)
            os.makedirs(op.work, exist_ok=True)
            started = time.monotonic()
            op.start()
            ready = time.monotonic() - started
            to_ready = compare.cpu_seconds(op.proc.proc.pid)
            time.sleep(IDLE_SECONDS)
            idle = compare.cpu_seconds(op.proc.proc.pid) - to_ready
            print(f"ready in {ready:.2f} s; CPU to ready {to_ready * 1000:.0f} ms; "
                  f"CPU in {IDLE_SECONDS} s idle {idle * 1000:.0f} ms", flush=True)
            op.proc.stop()
    finally:
        cp.stop()


if __name__ == "__main__":
    main()
