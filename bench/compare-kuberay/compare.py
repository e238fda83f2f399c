#!/usr/bin/env python3
"""Side by side: KubeRay and rayjournal carrying the same RayJobs through one real
kube-apiserver. For every size, mode and operator: a fresh etcd and API server (the e2e tier's
ControlPlane, with the Job and garbage-collector controllers of a real kube-controller-manager),
that operator's CRDs, the shared world (bench-world: fake kubelet, fake Ray dashboard, the
observer that creates and times the RayJobs), then the operator alone at its defaults. What it
reports comes from outside the operator: wall time and time to Running/Complete from the
world's watch, API requests by verb and resource from the API server's audit log (only the
operator's identity is audited), dashboard requests from the fake dashboard, CPU and peak RSS
from /proc. --kills 3 kills the operator with SIGKILL three times while RayJobs are in flight
and restarts it at once (rayjournal on the same journal).

Usage: compare.py [--rayjobs 100,500,2000] [--modes HTTPMode,K8sJobMode]
                  [--operators kuberay,rayjournal] [--kills 0] [--json FILE]
Needs: scripts/build.sh (rayjournal), scripts/build-control-plane.sh (etcd, kube-apiserver,
kube-controller-manager, kubectl) and bench/compare-kuberay/build.sh (KubeRay, bench-world);
--build runs all three first."""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests/e2e"))
from harness import ControlPlane, Process, crd_dir, free_port, run, wait_until  # noqa: E402

CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))
KUBERAY_VERSION = os.environ.get("KUBERAY_VERSION", "v1.6.2")
RAYJOURNAL_OPERATOR = os.path.join(ROOT, "build/bin/rayjournal-operator")
OPERATOR_USER = "bench-operator"
AUDIT_POLICY = f"""apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  users: ["{OPERATOR_USER}"]
- level: None
"""


class BenchControlPlane(ControlPlane):
    """The e2e control plane plus an operator identity of its own (system:masters, so both
    operators run without RBAC differences) whose requests alone are audited."""

    def certs(self):
        super().certs()
        d = self.dir
        run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{d}/{OPERATOR_USER}.key",
             "-out", f"{d}/{OPERATOR_USER}.csr", "-subj", f"/CN={OPERATOR_USER}/O=system:masters"])
        with open(f"{d}/{OPERATOR_USER}.ext", "w") as f:
            f.write("extendedKeyUsage=clientAuth\n")
        run(["openssl", "x509", "-req", "-in", f"{d}/{OPERATOR_USER}.csr", "-CA", f"{d}/ca.crt",
             "-CAkey", f"{d}/ca.key", "-CAcreateserial", "-days", "2",
             "-out", f"{d}/{OPERATOR_USER}.crt", "-extfile", f"{d}/{OPERATOR_USER}.ext"])
        self.bench_kubeconfig = self.write_kubeconfig(OPERATOR_USER)
        with open(f"{d}/audit-policy.yaml", "w") as f:
            f.write(AUDIT_POLICY)
        self.audit_log = f"{d}/audit.log"
        self.apiserver_flags = [f"--audit-policy-file={d}/audit-policy.yaml",
                                f"--audit-log-path={self.audit_log}", "--audit-log-maxsize=0"]


def cpu_seconds(pid):
    """utime + stime of a live process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def peak_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Operator:
    """One operator under test, restartable; CPU and peak RSS summed over its incarnations."""

    def __init__(self, name, work, cp, dashboard, extra=(), rayjournal=RAYJOURNAL_OPERATOR):
        self.name, self.work, self.cp, self.dashboard, self.extra = name, work, cp, dashboard, extra
        self.rayjournal = rayjournal
        self.proc, self.incarnations = None, 0
        self.cpu, self.rss = 0.0, 0.0
        self.journal = os.path.join(work, "journal")
        self.metrics_port = free_port()

    def command(self):
        if self.name == "kuberay":
            return [os.path.join(CACHE, "bin", f"kuberay-operator-{KUBERAY_VERSION}"),
                    f"--kubeconfig={self.cp.bench_kubeconfig}", f"--dashboard-address={self.dashboard}",
                    *self.extra]
        return [self.rayjournal,
                f"--kubeconfig={self.cp.bench_kubeconfig}", f"--journal-dir={self.journal}",
                f"--ray-dashboard-address={self.dashboard}",
                f"--metrics-bind-address=127.0.0.1:{self.metrics_port}", *self.extra]

    def start(self):
        self.incarnations += 1
        self.proc = Process(f"{self.name}-{self.incarnations}", self.command(), self.work).start()
        wait_until(f"{self.name} ready", self.ready, 120, 0.1)

    def ready(self):
        if not self.proc.alive():
            raise RuntimeError(f"{self.name} exited: {self.proc.log()[-2000:]}")
        log = self.proc.log()
        if self.name == "kuberay":
            return log.count("Starting workers") >= 3
        return "running:" in log

    def sample(self):
        pid = self.proc.proc.pid
        return cpu_seconds(pid), peak_rss_mib(pid)

    def account(self):
        cpu, rss = self.sample()
        self.cpu += cpu
        self.rss = max(self.rss, rss)

    def kill9(self):
        self.account()
        self.proc.kill9()

    def stop(self):
        self.account()
        self.proc.stop()

    def reconciles(self):
        """rayjournal's RayJob reconciles so far in this incarnation (its /metrics), or None."""
        if self.name != "rayjournal":
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return None
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("rayjournal_reconciles_total"))


def audit_counts(path):
    """The operator's requests from the audit log: {"verb resource[/sub]": n}."""
    counts = {}
    with open(path) as f:
        for line in f:
            event = json.loads(line)
            if event.get("user", {}).get("username") != OPERATOR_USER:
                continue
            ref = event.get("objectRef", {})
            resource = ref.get("resource", event.get("requestURI", "?").split("?")[0])
            if ref.get("subresource"):
                resource += "/" + ref["subresource"]
            key = f"{event['verb']} {resource}"
            counts[key] = counts.get(key, 0) + 1
    return counts


def apply_crds(cp, operator):
    cp.kubectl("apply", "--server-side", "-f", crd_dir(operator, ROOT, KUBERAY_VERSION))
    wait_until("CRDs served", lambda: cp.kube.list("RayJob") is not None, 60, 0.3)
    return warm_up(cp)


WARM_UP_NAMESPACE = "bench-warm-up"


def warm_up(cp):
    """Creates and deletes one RayJob before the world and the operator start: a fresh API
    server spends about 2 s on the first RayJob create of its life (1.2 s of it on the first
    validation, measured with kubectl), a cost a long-lived cluster never shows again and that
    had been in both operators' wall time. Returns that first create's seconds."""
    cp.kube.create_namespace(WARM_UP_NAMESPACE)
    head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        {"name": "ray-head", "image": "rayproject/ray:2.46.0"}]}}}
    rayjob = {"apiVersion": "ray.io/v1", "kind": "RayJob",
              "metadata": {"name": "warm-up", "namespace": WARM_UP_NAMESPACE},
              "spec": {"entrypoint": "true", "rayClusterSpec": {"headGroupSpec": head}}}
    started = time.monotonic()
    cp.kube.create("RayJob", rayjob)
    seconds = time.monotonic() - started
    cp.kube.delete("RayJob", WARM_UP_NAMESPACE, "warm-up", grace=0)
    wait_until("warm-up RayJob gone", lambda: cp.kube.get("RayJob", WARM_UP_NAMESPACE, "warm-up") is None,
               30, 0.1)
    return seconds


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def drive(args, op, world, progress_path, n):
    """Runs the RayJobs through; kills the operator at evenly spaced completion counts."""
    kill_at = [n * (k + 1) // (args.kills + 1) for k in range(args.kills)]
    open(progress_path + ".start", "w").close()
    while world.alive():
        progress = read_json(progress_path) or {}
        if kill_at and progress.get("terminal", 0) >= kill_at[0]:
            kill_at.pop(0)
            op.kill9()
            op.start()
        time.sleep(0.1)


def one_run(args, operator, mode, n, base):
    work = os.path.join(base, f"{operator}-{mode}-{n}")
    os.makedirs(work)
    cp = BenchControlPlane(CACHE, os.path.join(work, "cp"))
    world = op = None
    try:
        cp.start()
        warm_up_seconds = apply_crds(cp, operator)
        progress, port_file, out = (os.path.join(work, f) for f in ("progress.json", "dashboard", "world.json"))
        world = Process("world", [os.path.join(CACHE, "bin/bench-world"), f"--kubeconfig={cp.kubeconfig}",
                                  f"--mode={mode}", f"--count={n}", f"--progress={progress}",
                                  f"--port-file={port_file}", f"--out={out}",
                                  f"--timeout={args.timeout}s"], work).start()
        wait_until("world ready", lambda: (read_json(progress) or {}).get("phase") == "ready", 120, 0.1)
        extra = (args.kuberay_args if operator == "kuberay" else args.rayjournal_args).split()
        op = Operator(operator, work, cp, open(port_file).read().strip(), extra, args.rayjournal_operator)
        op.start()
        others = {"apiserver": cp.procs["kube-apiserver"], "etcd": cp.procs["etcd"],
                  "controller_manager": cp.procs["kube-controller-manager"]}
        cpu0 = {k: cpu_seconds(p.proc.pid) for k, p in others.items()}
        window = time.monotonic()
        drive(args, op, world, progress, n)
        window = time.monotonic() - window
        cpu = {k: round(cpu_seconds(p.proc.pid) - cpu0[k], 2) for k, p in others.items()}
        apiserver_cpu = cpu["apiserver"]
        reconciles = op.reconciles()
        op.stop()
        result = read_json(out)
        if result is None:
            raise RuntimeError(f"bench-world wrote no result: {world.log()[-2000:]}")
    finally:
        if op and op.proc:
            op.proc.stop()
        if world:
            world.stop()
        cp.stop()
    requests = audit_counts(cp.audit_log)
    total = sum(requests.values())
    everything = op.cpu + sum(cpu.values()) + result.get("world_cpu_seconds", 0)
    wall = max(window, 1e-9)  # the window the CPU figures cover: creates to the world's end
    result.update({"operator": operator, "kills": args.kills, "operator_cpu_seconds": round(op.cpu, 2),
                   "operator_cpu_ms_per_rayjob": round(op.cpu * 1000 / n, 2),
                   "operator_peak_rss_mib": round(op.rss, 1),
                   "apiserver_cpu_seconds": round(apiserver_cpu, 2), "other_cpu_seconds": cpu,
                   "all_processes_cpu_seconds": round(everything, 1),
                   "machine_busy_percent": round(100 * everything / (wall * (os.cpu_count() or 1)), 0),
                   "api_requests": requests, "api_requests_per_rayjob": round(total / n, 2),
                   "warm_up_first_rayjob_create_seconds": round(warm_up_seconds, 2)})
    if reconciles is not None and not args.kills:  # one incarnation's count: only without kills
        result["operator_rayjob_reconciles_per_rayjob"] = round(reconciles / n, 2)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


def correct(r):
    return (r["all_terminal"] and r["complete"] == r["rayjobs"] and r["rayclusters_created"] == r["rayjobs"]
            and r["ray_submissions"] == r["rayjobs"] and r["duplicate_ray_submissions"] == 0)


ROWS = [("RayJobs/min", "rayjobs_per_minute", "{:.0f}"), ("wall to all Complete (s)", "wall_seconds", "{:.1f}"),
        ("to Running p50 / p95 (s)", ("to_running_p50_s", "to_running_p95_s"), "{:.1f} / {:.1f}"),
        ("to Complete p50 / p95 (s)", ("to_complete_p50_s", "to_complete_p95_s"), "{:.1f} / {:.1f}"),
        ("API requests per RayJob", "api_requests_per_rayjob", "{:.1f}"),
        ("dashboard requests per RayJob", "dashboard_requests_per_rayjob", "{:.1f}"),
        ("operator CPU s (ms per RayJob)", ("operator_cpu_seconds", "operator_cpu_ms_per_rayjob"), "{:.1f} ({:.1f})"),
        ("operator peak RSS (MiB)", "operator_peak_rss_mib", "{:.0f}"),
        ("API server CPU s", "apiserver_cpu_seconds", "{:.1f}"),
        ("CPU s of every process (machine busy %)", ("all_processes_cpu_seconds", "machine_busy_percent"),
         "{:.0f} ({:.0f}%)"),
        ("RayClusters / submissions / duplicates", ("rayclusters_created", "ray_submissions", "duplicate_ray_submissions"), "{} / {} / {}"),
        ("extra attempts", "extra_attempts", "{}"), ("correct", None, None)]


def cell(r, key, fmt):
    if r is None:
        return "-"
    if key is None:
        return "yes" if correct(r) else "NO"
    keys = key if isinstance(key, tuple) else (key,)
    return fmt.format(*(r[k] for k in keys))


def table(results):
    out = []
    groups = sorted({(r["mode"], r["rayjobs"]) for r in results}, key=lambda g: (g[0], g[1]))
    for mode, n in groups:
        by = {r["operator"]: r for r in results if r["mode"] == mode and r["rayjobs"] == n}
        kuberay, ours = by.get("kuberay"), by.get("rayjournal")
        out.append(f"\n### {n} RayJobs, {mode}, {results[0]['kills']} kills per run\n")
        out.append(f"| | KubeRay {KUBERAY_VERSION} | rayjournal | rayjournal / KubeRay |")
        out.append("|---|---|---|---|")
        for label, key, fmt in ROWS:
            ratio = ""
            if kuberay and ours and isinstance(key, str) and kuberay[key]:
                ratio = f"{ours[key] / kuberay[key]:.2f}"
            out.append(f"| {label} | {cell(kuberay, key, fmt)} | {cell(ours, key, fmt)} | {ratio} |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rayjobs", default="100,500", help="comma-separated sizes (default 100,500)")
    p.add_argument("--modes", default="HTTPMode,K8sJobMode")
    p.add_argument("--operators", default="kuberay,rayjournal")
    p.add_argument("--kills", type=int, default=0, help="SIGKILLs of the operator per run")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per run before giving up")
    p.add_argument("--json", default="compare-kuberay.json", help="result file")
    p.add_argument("--kuberay-args", default="", help="extra flags for KubeRay (default: none)")
    p.add_argument("--rayjournal-args", default="", help="extra flags for rayjournal (default: none)")
    p.add_argument("--keep", action="store_true", help="keep each run's directory (logs, audit log)")
    p.add_argument("--build", action="store_true", help="build both operators and the control plane first")
    p.add_argument("--rayjournal-operator", default=RAYJOURNAL_OPERATOR, help="the binary to run")
    args = p.parse_args()
    if args.build:
        subprocess.run(["bash", os.path.join(ROOT, "scripts/build.sh")], check=True)
        subprocess.run(["bash", os.path.join(ROOT, "scripts/build-control-plane.sh")], check=True)
        subprocess.run(["bash", os.path.join(HERE, "build.sh")], check=True)
    base = tempfile.mkdtemp(prefix="compare-kuberay-")
    results = []
    for n in [int(x) for x in args.rayjobs.split(",")]:
        for mode in args.modes.split(","):
            for operator in args.operators.split(","):
                started = time.monotonic()
                r = one_run(args, operator, mode, n, base)
                results.append(r)
                print(f"{operator} {mode} {n}: {r['rayjobs_per_minute']:.0f}/min, "
                      f"{r['api_requests_per_rayjob']} requests/RayJob, correct={correct(r)} "
                      f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
                with open(args.json, "w") as f:
                    json.dump({"kuberay_version": KUBERAY_VERSION, "results": results}, f, indent=2)
    print(table(results))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if all(correct(r) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
