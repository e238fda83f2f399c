"""KubeRay's weak spots side by side: the faults behind W1, W4, W6, W8 (also with GCS fault
tolerance) and W9
(../shared/reference/kuberay-rayjob-semantics.md) injected with real Ray into KubeRay's operator
and rayjournal alike, on the real node (--node: each operator deployed in it as its users deploy
it, killed with SIGKILL through containerd and held down by scaling it to no replicas, a fault
proxy reached through KUBERNETES_SERVICE_HOST) or on the real control plane and the kubelet
stand-in.

  weakspots.py [--node] [--operator rayjournal|kuberay|both] [--case REGEX] [--json FILE]
               [--markdown FILE]

Each case runs in a namespace of its own on one stage per operator (stage.py) and reports what a
user would count afterwards: the RayClusters the RayJob got, how many times Ray ran the job
(the entrypoint appends `start` and `end` to a file on the host, so Ray's own runs are counted,
not the operator's claims), the final status, and what was left behind (children after the
RayJob is gone, a Ray job that ran on after its RayJob was deleted). A case's verdict is `ok`
when the operator did what the RayJob asked for, once, and left nothing behind.

Exit 0 when rayjournal was `ok` in every case it ran (KubeRay's results are what they are).
Needs root (the stand-in's namespaces, the node's containerd) and iptables (the W9 case)."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from stage import KUBERAY_VERSION, OPERATORS, ROOT, NodeStage, Stage, head_commit, report  # noqa: E402
from harness import wait_until  # noqa: E402
import nodeclient  # noqa: E402

TERMINAL = ("Complete", "Failed")
# The Ray image a head runs: on the stand-in any name (it runs the host's Ray), on the real node
# the one built here.
RAY = {False: "2.46.0", True: "2.60.0"}


def head_group(node, shared=None):
    """A one-CPU head; `shared`: volumes and mounts that show a host directory to it."""
    container = {"name": "ray-head", "image": f"rayproject/ray:{RAY[node]}",
                 "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                               "limits": {"cpu": "1", "memory": "2Gi"}}}
    spec = {"containers": [container]}
    if shared:
        container["volumeMounts"] = shared["volumeMounts"]
        spec["volumes"] = shared["volumes"]
    return {"rayStartParams": {"num-cpus": "1", "dashboard-host": "0.0.0.0"},
            "template": {"spec": spec}}


def rayjob(case, name, mode, entrypoint, **spec):
    body = {"entrypoint": entrypoint, "submissionMode": mode}
    if "clusterSelector" not in spec:
        body.update(shutdownAfterJobFinishes=True,
                    rayClusterSpec={"rayVersion": RAY[case.node], "headGroupSpec": case.head})
    body.update(spec)
    return {"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "namespace": case.ns}, "spec": body}


class Case:
    """One fault against one operator. Subclasses: rayjob() what is applied, fault() what
    happens to it, expect what a correct operator ends with."""

    name, weak_spot, fault_text, expect = "", "", "", ""
    mode, seconds = "K8sJobMode", 30
    submitter_jobs_allowed = 1
    succeeds = True  # the job succeeds: a correct operator ends Complete with SUCCEEDED

    def __init__(self, stage, runs_dir):
        self.stage, self.kube = stage, stage.cp.kube
        self.node = isinstance(stage, NodeStage)
        self.head = head_group(self.node, stage.share_with_pods(runs_dir))
        self.ns = "ws-" + re.sub(r"[^a-z0-9]", "", self.name.lower())
        self.runs = os.path.join(runs_dir, f"{self.ns}-{stage.operator}.runs")
        self.clusters, self.submitters = set(), set()
        self.watching = threading.Event()
        self.notes = []

    def entrypoint(self):
        return (f"python -c \"import time; f='{self.runs}'; print('start', file=open(f, 'a')); "
                f"time.sleep({self.seconds}); print('end', file=open(f, 'a'))\"")

    def runs_seen(self):
        if not os.path.exists(self.runs):
            return [], []
        lines = open(self.runs).read().split()
        return [x for x in lines if x == "start"], [x for x in lines if x == "end"]

    def job(self):
        return self.kube.get("RayJob", self.ns, "job")

    def status(self):
        return (self.job() or {}).get("status", {})

    def watch_clusters(self):
        """Every RayCluster the RayJob owned at any time (polled, as a user's watch would)."""
        while not self.watching.wait(0.5):
            try:
                for c in self.kube.list("RayCluster", self.ns):
                    owners = c["metadata"].get("ownerReferences", [])
                    if any(o.get("kind") == "RayJob" for o in owners):
                        self.clusters.add(c["metadata"]["uid"])
                for j in self.kube.list("Job", self.ns):
                    # A GCS FT cluster's Redis cleanup Job is the cluster's, not a submitter.
                    if j["metadata"].get("labels", {}).get("ray.io/node-type") != "redis-cleanup":
                        self.submitters.add(j["metadata"]["uid"])
            except Exception:  # noqa: BLE001 - the API server answers again next time
                pass

    def wait_status(self, what, predicate, timeout):
        wait_until(f"{self.ns}: {what}", lambda: predicate(self.status()), timeout, 1)

    def wait_running(self):
        self.wait_status("Ray says RUNNING", lambda s: s.get("jobStatus") == "RUNNING", 240)
        wait_until(f"{self.ns}: the job's first run started",
                   lambda: len(self.runs_seen()[0]) >= 1, 60, 0.5)

    def head_pod(self):
        name = self.status().get("rayClusterName") or self.shared_cluster
        pods = self.kube.list("Pod", self.ns, f"ray.io/cluster={name},ray.io/node-type=head")
        return pods[0] if pods else None

    shared_cluster = None

    def wait_end(self, timeout):
        """The final status, or the last one seen when it never ends."""
        try:
            self.wait_status("a final status", lambda s: s.get("jobDeploymentStatus") in TERMINAL,
                             timeout)
        except TimeoutError:
            self.notes.append(f"no final status within {timeout} s")
        return self.status()

    def run(self):
        if self.node:  # an earlier run's namespace of the same name may still be going
            wait_until(f"{self.ns} from an earlier run gone", lambda: self.kube.get(
                "Namespace", None, self.ns) is None, 180, 1)
        self.kube.create_namespace(self.ns)
        watcher = threading.Thread(target=self.watch_clusters, daemon=True)
        watcher.start()
        started = time.monotonic()
        try:
            self.prepare()
            self.kube.create("RayJob", self.rayjob())
            final = self.fault()
            leftovers = self.clean_up()
        finally:
            self.watching.set()
            if self.node:  # the cluster outlives the case; its Pods' requests must not
                self.kube.delete("Namespace", None, self.ns)
        starts, ends = self.runs_seen()
        row = {"case": self.name, "weak_spot": self.weak_spot, "operator": self.stage.operator,
               "fault": self.fault_text, "expect": self.expect,
               "deployment_status": final.get("jobDeploymentStatus", ""),
               "reason": final.get("reason", ""), "job_status": final.get("jobStatus", ""),
               "message": final.get("message", "")[:160],
               "ray_clusters": len(self.clusters), "submitter_jobs": len(self.submitters),
               "ray_runs": len(starts),
               "runs_finished": len(ends), "leftovers": leftovers, "notes": self.notes,
               "seconds": round(time.monotonic() - started)}
        row["problems"] = self.problems(row)
        row["verdict"] = "ok" if not row["problems"] else "wrong"
        return row

    def prepare(self):
        pass

    def clean_up(self):
        """Deletes the RayJob and reports what is left of it a minute later."""
        self.kube.delete("RayJob", self.ns, "job")
        try:
            wait_until(f"{self.ns}: RayJob gone", lambda: self.job() is None, 90, 1)
        except TimeoutError:
            return ["the RayJob itself (still there 90 s after its deletion)"]
        return self.children_left()

    def children_left(self):
        def left():
            out = [f"RayCluster {c['metadata']['name']}" for c in self.kube.list("RayCluster", self.ns)
                   if c["metadata"]["name"] != self.shared_cluster]
            out += [f"Job {j['metadata']['name']}" for j in self.kube.list("Job", self.ns)]
            return out
        try:
            wait_until(f"{self.ns}: children gone", lambda: not left(), 60, 1)
        except TimeoutError:
            pass
        return left()

    def problems(self, row):
        out = []
        if row["ray_clusters"] > 1:
            out.append(f"{row['ray_clusters']} RayClusters for one attempt")
        if row["submitter_jobs"] > self.submitter_jobs_allowed:
            out.append(f"{row['submitter_jobs']} submitter Jobs for one attempt")
        if row["ray_runs"] > 1:
            out.append(f"Ray ran the job {row['ray_runs']} times")
        if row["leftovers"]:
            out.append("left behind: " + ", ".join(row["leftovers"]))
        if self.succeeds and (row["deployment_status"], row["job_status"]) != (
                "Complete", "SUCCEEDED"):
            out.append(f"ended {row['deployment_status'] or '-'}/{row['reason'] or '-'} with "
                       f"jobStatus {row['job_status'] or '-'}, but the job succeeded")
        return out


class KilledBeforeStatusWrite(Case):
    name, weak_spot, seconds = "Operator killed between a child's creation and its status write", \
        "W1", 20
    fault_text = ("K8sJobMode; the operator SIGKILLed as it sends its first RayJob status write "
                  "after creating the RayCluster (a proxy drops that write); started again")
    expect = "one RayCluster, one submitter Job, the job run once, Complete"

    def prepare(self):
        self.created, self.fired, self.killing = False, threading.Event(), threading.Lock()
        self.stage.stop_operator()
        self.proxy = FaultProxy(self.stage, self.decide)
        self.proxy.start()
        self.stage.start_operator(self.proxy)

    def decide(self, method, path):
        if self.fired.is_set():
            return True
        if self.killing.locked():
            return False  # the operator is being killed: nothing more of it reaches the server
        prefix = f"/apis/ray.io/v1/namespaces/{self.ns}/"
        if method == "POST" and path.startswith(prefix + "rayclusters"):
            self.created = True
        elif (self.created and method in ("PUT", "PATCH") and
              path.startswith(prefix + "rayjobs/job/status")):
            # Killed before the case goes on: on the real node the kill (SIGKILL, then no
            # replicas) takes a moment, and starting the operator again meanwhile would race it.
            if self.killing.acquire(blocking=False):
                self.stage.kill_operator()
                self.fired.set()
            return False
        return True

    def rayjob(self):
        return rayjob(self, "job", self.mode, self.entrypoint())

    def fault(self):
        try:
            wait_until(f"{self.ns}: the status write after the RayCluster's creation",
                       self.fired.is_set, 240, 0.2)
        finally:
            self.proxy.close()
        self.stage.start_operator()
        return self.wait_end(self.seconds + 240)



class LostRecord(Case):
    name, weak_spot, mode, seconds = "Ray record lost while the operator is down", "W8", \
        "HTTPMode", 40
    fault_text = ("HTTPMode; operator SIGKILLed while the job runs; head Pod deleted (Ray, "
                  "without GCS fault tolerance, forgets its jobs); operator started again")
    expect = "the job is not run a second time; the attempt fails and says Ray lost the record"
    succeeds = False

    def rayjob(self):
        return rayjob(self, "job", self.mode, self.entrypoint())

    def fault(self):
        self.wait_running()
        self.stage.kill_operator()
        head = self.head_pod()
        self.kube.delete("Pod", self.ns, head["metadata"]["name"])
        wait_until(f"{self.ns}: old head gone", lambda: not any(
            p["metadata"]["uid"] == head["metadata"]["uid"]
            for p in self.kube.list("Pod", self.ns)), 90, 0.5)
        self.stage.start_operator()
        return self.wait_end(self.seconds + 150)

    def problems(self, row):
        out = super().problems(row)
        if row["deployment_status"] != "Failed":
            out.append(f"ended {row['deployment_status'] or 'without a final status'}, not "
                       "Failed, although Ray lost the job it was running")
        return out


class HeadLostWithGcsFt(Case):
    """The same loss with GCS fault tolerance: Ray keeps its cluster metadata in Redis (a Redis
    Deployment and Service in the case's namespace, as KubeRay's test support deploys it), and
    the driver runs on a worker (entrypointNumCpus 1, a head of num-cpus 0), so that only the
    head goes. The operator stays up. Node only: Redis is an image of the node."""

    name, weak_spot, mode, seconds = "Head Pod lost with GCS fault tolerance", "W8-FT", \
        "HTTPMode", 60
    fault_text = ("HTTPMode on a GCS fault-tolerant cluster (Redis), the driver on a worker; the "
                  "head Pod deleted while the job runs")
    expect = ("Ray's record survives: the RayJob ends as Ray says in the same attempt, the job "
              "run once and never resubmitted")
    succeeds = False  # whether Ray 2.60 keeps the driver alive is what the row measures

    def prepare(self):
        if not self.node:
            raise RuntimeError("needs the real node (Redis runs as a Pod)")
        labels = {"app": "redis"}
        self.kube.create("Deployment", {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "redis", "namespace": self.ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                         "name": "redis", "image": "redis:7.4",
                         # Without a password Redis refuses other Pods' connections unless
                         # protected mode is off (GCS then dies on "connection reset by peer").
                         "command": ["redis-server", "--protected-mode", "no", "--save", "",
                                     "--appendonly", "no"],
                         "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                         "ports": [{"containerPort": 6379}]}]}}}})
        self.kube.create("Service", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "redis", "namespace": self.ns},
            "spec": {"selector": labels, "ports": [{"port": 6379, "targetPort": 6379}]}})

    def rayjob(self):
        head = {**self.head, "rayStartParams": {"num-cpus": "0", "dashboard-host": "0.0.0.0"}}
        worker = {"groupName": "workers", "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
                  "rayStartParams": {"num-cpus": "1"},
                  "template": {"spec": {**self.head["template"]["spec"], "containers": [
                      {**self.head["template"]["spec"]["containers"][0], "name": "ray-worker"}]}}}
        job = rayjob(self, "job", self.mode, self.entrypoint(), entrypointNumCpus=1)
        job["spec"]["rayClusterSpec"].update(
            headGroupSpec=head, workerGroupSpecs=[worker],
            gcsFaultToleranceOptions={"redisAddress": "redis:6379"})
        return job

    def fault(self):
        self.wait_running()
        attempt = self.status().get("failed", 0)
        head = self.head_pod()
        self.kube.delete("Pod", self.ns, head["metadata"]["name"])
        final = self.wait_end(self.seconds + 240)
        if final.get("failed", 0) != attempt:
            self.notes.append(f"the attempt changed: failed {attempt} -> {final.get('failed')}")
        return final

    def problems(self, row):
        out = super().problems(row)
        if row["deployment_status"] not in TERMINAL:
            out.append("no final status")
        if "RecordLost" in row["message"] or not row["job_status"]:
            out.append("Ray's record was lost although GCS fault tolerance was on")
        out += [n for n in row["notes"] if n.startswith("the attempt changed")]
        return out


class FinishedWhileDown(Case):
    name, weak_spot, seconds = "Job finishes while the operator is down", "W4", 15
    fault_text = ("K8sJobMode; operator SIGKILLed while the job runs; the job succeeds and the "
                  "submitter Job completes; operator started again 40 s later")
    expect = "Complete, jobStatus SUCCEEDED, as Ray says"

    def rayjob(self):
        return rayjob(self, "job", self.mode, self.entrypoint())

    def fault(self):
        self.wait_running()
        self.stage.kill_operator()
        wait_until(f"{self.ns}: the run ended", lambda: len(self.runs_seen()[1]) >= 1,
                   self.seconds + 60, 0.5)
        wait_until(f"{self.ns}: submitter Job complete", self.submitter_complete, 60, 1)
        time.sleep(40)  # the outage itself: longer than KubeRay's 30 s submitter-finished timeout
        self.stage.start_operator()
        return self.wait_end(120)

    def submitter_complete(self):
        j = self.kube.get("Job", self.ns, "job") or {}
        return any(c.get("type") == "Complete" and c.get("status") == "True"
                   for c in j.get("status", {}).get("conditions", []))



class SubmitterDeleted(Case):
    name, weak_spot, seconds = "Submitter Job deleted mid-run", "W6", 30
    fault_text = "K8sJobMode; the submitter Job deleted (background propagation) while the job runs"
    expect = "Complete, jobStatus SUCCEEDED, the job run once"
    # The one the fault deleted and the replacement a correct operator creates (same submission
    # id, so Ray still runs the job once: ray_runs is what counts here).
    submitter_jobs_allowed = 2

    def rayjob(self):
        return rayjob(self, "job", self.mode, self.entrypoint())

    def fault(self):
        self.wait_running()
        self.kube.delete("Job", self.ns, "job")
        return self.wait_end(self.seconds + 120)



class DeletedWhileStopUnconfirmed(Case):
    name, weak_spot, seconds = "RayJob deleted while Ray cannot confirm the stop", "W9", 60
    fault_text = ("K8sJobMode on a shared RayCluster (clusterSelector); the head's dashboard "
                  "refusing connections for 25 s (as while it restarts: a TCP reset for every "
                  "packet to its port from outside the head Pod); the RayJob deleted then")
    expect = "the Ray job is stopped once the dashboard answers; the RayJob goes"
    succeeds = False
    shared_cluster = "shared"
    # Reset, not dropped or frozen: a stop request its client gave up on must not land later.
    # A frozen (SIGSTOPped) dashboard reads it from its socket when it resumes, and a dropped
    # one on a kept-alive connection is retransmitted by the client's kernel after the client
    # closed it (both seen: KubeRay's stop then "succeeds" 25 s after it logged its failure).
    DROP = ["INPUT", "!", "-i", "lo", "-p", "tcp", "--dport", "8265", "-j", "REJECT",
            "--reject-with", "tcp-reset"]

    def prepare(self):
        cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                   "metadata": {"name": self.shared_cluster, "namespace": self.ns},
                   "spec": {"rayVersion": RAY[self.node], "headGroupSpec": self.head}}
        self.kube.create("RayCluster", cluster)
        wait_until(f"{self.ns}: shared cluster ready", lambda: (self.kube.get(
            "RayCluster", self.ns, self.shared_cluster) or {}).get("status", {}).get(
            "state") == "ready", 240, 1)

    def rayjob(self):
        return rayjob(self, "job", self.mode, self.entrypoint(),
                      clusterSelector={"ray.io/cluster": self.shared_cluster})

    def iptables(self, action):
        if self.node:
            nodeclient.in_pod_netns(self.head_pod(), ["iptables", action, *self.DROP])
            return
        head = self.stage.kubelet.pods.get((self.ns, self.head_pod()["metadata"]["name"]))
        subprocess.run(["ip", "netns", "exec", head.netns, "iptables", action, *self.DROP],
                       check=True)

    def fault(self):
        self.wait_running()
        self.iptables("-I")
        cut = time.monotonic()
        try:
            self.kube.delete("RayJob", self.ns, "job")
            wait_until(f"{self.ns}: RayJob gone or 25 s", lambda: self.job() is None or
                       time.monotonic() - cut > 25, 40, 0.5)
            time.sleep(max(0.0, 25 - (time.monotonic() - cut)))  # the outage's own length
        finally:
            self.iptables("-D")
        try:
            wait_until(f"{self.ns}: RayJob gone", lambda: self.job() is None, 90, 1)
        except TimeoutError:
            self.notes.append("RayJob still there 90 s after the dashboard answered again")
        # Long enough for the job to have ended on its own had nobody stopped it.
        started = time.monotonic()
        wait_until(f"{self.ns}: the job's own end would be past",
                   lambda: len(self.runs_seen()[1]) >= 1 or time.monotonic() - started >
                   self.seconds + 5, self.seconds + 15, 1)
        return {"jobDeploymentStatus": "(deleted)"}

    def clean_up(self):
        leftovers = []
        if self.job() is not None:
            leftovers.append("the RayJob itself (still there 90 s after its deletion)")
        if self.runs_seen()[1]:
            leftovers.append("the Ray job, which ran to its end after its RayJob was deleted")
        return leftovers


CASES = [KilledBeforeStatusWrite, LostRecord, HeadLostWithGcsFt, FinishedWhileDown, SubmitterDeleted,
         DeletedWhileStopUnconfirmed]


def run_operator(operator, cases, args, runs_dir):
    work = tempfile.mkdtemp(prefix=f"rjws-{operator}-")
    stage = (NodeStage(operator, work) if args.node
             else Stage(operator, work, args.rayjournal_operator))
    rows = []
    try:
        stage.start()
        for case_class in cases:
            case = case_class(stage, runs_dir)
            print(f"weakspots.py: {operator}: {case.name}", file=sys.stderr, flush=True)
            try:
                rows.append(case.run())
            except Exception as e:  # noqa: BLE001 - one case's harness failure, reported
                rows.append({"case": case.name, "weak_spot": case.weak_spot,
                             "operator": operator, "verdict": "error", "problems": [str(e)]})
            trouble = stage.operator_trouble()
            if trouble:  # beside what the case found: a harness error says why it stopped
                rows[-1].update(verdict="error", problems=rows[-1]["problems"] + [trouble])
            if trouble or not stage.op.alive():
                stage.start_operator()
            print(f"weakspots.py: {operator}: {case.name}: {rows[-1]['verdict']} "
                  f"{rows[-1]['problems']}", file=sys.stderr, flush=True)
    finally:
        stage.stop()
    if not args.keep and all(r["verdict"] == "ok" for r in rows):
        subprocess.run(["rm", "-rf", work])
    else:
        print(f"weakspots.py: {operator}'s work dir kept: {work}", file=sys.stderr)
    return rows


def markdown(rows, meta):
    out = [f"{meta['date']} · commit {meta['commit']} · KubeRay {meta['kuberay']} · "
           f"{meta.get('node', 'stand-in')} node · {meta['seconds']:.0f} s", "",
           "| weak spot | fault | operator | RayClusters | submitter Jobs | Ray runs | final status "
           "| left behind | verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        final = "/".join(x for x in (r.get("deployment_status"), r.get("reason"),
                                      r.get("job_status")) if x)
        out.append(f"| {r['weak_spot']} | {r.get('fault', r['case'])} | {r['operator']} | "
                   f"{r.get('ray_clusters', '')} | {r.get('submitter_jobs', '')} | "
                   f"{r.get('ray_runs', '')} | {final} | "
                   f"{', '.join(r.get('leftovers', [])) or 'nothing'} | **{r['verdict']}**"
                   f"{': ' + '; '.join(r['problems']) if r['problems'] else ''} |")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--operator", choices=[*OPERATORS, "both"], default="both")
    p.add_argument("--case", default=".", help="regular expression on the case names or W-numbers")
    p.add_argument("--rayjournal-operator", help="the operator binary (default: build/bin)")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--markdown", help="write the table here")
    p.add_argument("--keep", action="store_true", help="keep the work directories")
    p.add_argument("--node", action="store_true",
                   help="on the real node (scripts/cluster.sh), each operator deployed in it as "
                        "its users deploy it, instead of on the kubelet stand-in")
    args = p.parse_args()
    if os.geteuid() != 0:
        print("weakspots.py: skipped: the stand-in needs root (network and mount namespaces)",
              file=sys.stderr)
        sys.exit(77)
    cases = [c for c in CASES if re.search(args.case, f"{c.weak_spot} {c.name}")]
    operators = OPERATORS if args.operator == "both" else (args.operator,)
    # The job writes its runs here, a host path the stand-in's containers see (their /tmp is the
    # Pod's own).
    runs_dir = tempfile.mkdtemp(prefix="weakspots-", dir=os.path.join(ROOT, ".cache"))
    os.chmod(runs_dir, 0o777)
    started = time.monotonic()
    rows = [r for op in operators for r in run_operator(op, cases, args, runs_dir)]
    subprocess.run(["rm", "-rf", runs_dir])
    meta = {"date": time.strftime("%Y-%m-%d"), "seconds": time.monotonic() - started,
            "commit": head_commit(), "kuberay": KUBERAY_VERSION,
            "node": "real" if args.node else "stand-in"}
    report(meta, rows, markdown(rows, meta), args.json, args.markdown)
    ours = [r for r in rows if r["operator"] == "rayjournal"]
    sys.exit(0 if all(r["verdict"] == "ok" for r in ours) else 1)


if __name__ == "__main__":
    main()
