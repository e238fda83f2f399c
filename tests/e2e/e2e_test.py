"""e2e tier: the operator against a real kube-apiserver + etcd + kube-controller-manager and a
real Ray head (see harness.py). Usage: e2e_test.py OPERATOR REPLAY REPO_ROOT
Runs every scenario on one control plane and one Ray head, each in its own namespace."""

import os
import subprocess
import json
import random
import re
import sqlite3
import urllib.request
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import (ApiError, OperatorCase, Process, RayProxy, free_port, run,  # noqa: E402
                     wait_until)

OPERATOR, REPLAY, ROOT = sys.argv[1:4]
CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))
HEAD_IMAGE = "rayproject/ray:2.60.0"
OK_ENTRYPOINT = "python -c \"import ray; ray.init(); print('e2e-ok')\""


def rayjob(ns, name, entrypoint=OK_ENTRYPOINT, mode="K8sJobMode", **spec):
    body = {
        "entrypoint": entrypoint,
        "submissionMode": mode,
        "shutdownAfterJobFinishes": False,
        "rayClusterSpec": {
            "rayVersion": "2.60.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [{
                "name": "ray-head", "image": HEAD_IMAGE,
                "ports": [{"containerPort": 8265, "name": "dashboard"}]}]}}},
            "workerGroupSpecs": [{"groupName": "small", "replicas": 1, "minReplicas": 1,
                                  "maxReplicas": 1, "rayStartParams": {},
                                  "template": {"spec": {"containers": [{
                                      "name": "ray-worker", "image": HEAD_IMAGE}]}}}],
        },
    }
    body.update(spec)
    return {"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "namespace": ns}, "spec": body}


class E2E(OperatorCase):
    operator, replay, cache, root = OPERATOR, REPLAY, CACHE, ROOT

    def ray_submissions(self, name):
        return [j for j in self.ray.jobs()
                if (j.get("submission_id") or "").startswith(name)]

    # --- scenarios ---

    def test_k8sjob_mode_success(self):
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "pi"))
        s = self.wait_status("pi", "Complete")
        self.assertEqual(s["jobStatus"], "SUCCEEDED")
        cluster = self.kube.get("RayCluster", self.ns, s["rayClusterName"])
        self.assertEqual(cluster["status"]["state"], "ready")
        self.assertIsNotNone(self.kube.get("Pod", self.ns, s["rayClusterName"] + "-head"))
        self.assertIsNotNone(self.kube.get("Service", self.ns, s["rayClusterName"] + "-head-svc"))
        submitter = self.kube.get("Job", self.ns, "pi")
        self.assertIsNotNone(submitter, "the submitter Job exists")
        subs = self.ray_submissions(s["jobId"])
        self.assertEqual(len(subs), 1, subs)
        self.assertEqual(subs[0]["status"], "SUCCEEDED")
        _, logs = self.ray.request("GET", f"/api/jobs/{s['jobId']}/logs")
        self.assertIn("e2e-ok", logs)
        self.verify_journal()

    def test_ray_runs_only_in_the_pods_the_operator_built(self):
        """Nothing starts Ray but the operator's Pods: the kubelet runs the head's and the
        worker's generated commands, the worker joins the head through the head Service, the
        submitter runs against that head and the driver sees both nodes. Then the head's Ray
        container dies: the failed head Pod is replaced under its name, the worker rejoins the
        new head, the cluster is ready again, and the finished RayJob stays Complete."""
        self.kubelet.real_namespaces.add(self.ns)
        self.start_operator(dashboard="127.0.0.1:8265")  # the head Service's dashboard port
        entrypoint = ("python -c \"import ray; ray.init(); "
                      "n = len([x for x in ray.nodes() if x['Alive']]); "
                      "print('alive nodes', n); assert n == 2\"")
        job = rayjob(self.ns, "real", entrypoint=entrypoint)
        cluster = job["spec"]["rayClusterSpec"]
        params = {"num-cpus": "1", "object-store-memory": "100000000"}
        cluster["headGroupSpec"]["rayStartParams"] = dict(params)
        cluster["headGroupSpec"]["template"]["spec"]["restartPolicy"] = "Never"
        cluster["workerGroupSpecs"][0]["rayStartParams"] = dict(params)
        self.kube.create("RayJob", job)
        s = self.wait_status("real", "Complete", 420)
        self.assertEqual(s["jobStatus"], "SUCCEEDED", s)
        name = s["rayClusterName"]
        head = self.kube.get("Pod", self.ns, name + "-head")
        self.assertIn("ray start --head ", head["spec"]["containers"][0]["args"][0])
        worker = self.kube.get("Pod", self.ns, name + "-small-worker-0")
        self.assertEqual(worker["spec"]["initContainers"][0]["name"], "wait-gcs-ready")
        logs = ""
        for f in os.listdir(self.logs):
            if f.startswith(f"pod-{self.ns}-real-"):
                with open(os.path.join(self.logs, f), errors="replace") as log:
                    logs += log.read()
        self.assertIn("alive nodes 2", logs, "the driver saw the head and the worker")

        first_uid = head["metadata"]["uid"]
        self.kubelet.kill_container(self.ns, name + "-head")
        wait_until("a new head Pod", lambda: (self.kube.get("Pod", self.ns, name + "-head") or
                                               {"metadata": {"uid": first_uid}})
                   ["metadata"]["uid"] != first_uid, 120, 0.5)
        wait_until("the cluster ready again with a new head and its worker",
                   lambda: self.kube.get("RayCluster", self.ns, name)["status"].get("state")
                   == "ready", 180, 1)
        self.assertEqual(self.status("real")["jobDeploymentStatus"], "Complete")
        self.verify_journal()

    def test_kuberay_samples_on_the_real_control_plane(self):
        """KubeRay v1.7.0's samples, unchanged: every RayJob in them passes the API server's
        admission of our CRDs, a user-made RayCluster (KubeRay's ray-cluster.sample.yaml) is
        reconciled and selected by ray-job.use-existing-raycluster.yaml, which completes, and
        ray-job.interactive-mode.yaml waits for its job id as KubeRay's does."""
        samples = os.path.join(ROOT, "tests/scenario/kuberay-v1.7.0")
        for f in sorted(os.listdir(samples)):
            if not f.startswith("ray-job."):
                continue
            # Only the RayJob documents: some samples also carry other projects' kinds.
            out = self.cp.kubectl("create", "--dry-run=server", "-n", self.ns, "-o", "name",
                                  "-f", os.path.join(samples, f), check=False)
            self.assertRegex(out.stdout, r"rayjob\.ray\.io/", (f, out.stderr))
            self.assertNotIn("rayjob", out.stderr.lower(), (f, out.stderr))
        self.start_operator()
        for f in ("fixtures/ray-cluster-kuberay.yaml", "ray-job.use-existing-raycluster.yaml",
                  "ray-job.interactive-mode.yaml"):
            self.cp.kubectl("apply", "-n", self.ns, "-f", os.path.join(samples, f))
        s = self.wait_status("rayjob-use-existing-raycluster", "Complete", 240)
        self.assertEqual(s["jobStatus"], "SUCCEEDED", s)
        self.assertEqual(s["rayClusterName"], "ray-cluster-kuberay")
        self.assertIsNotNone(self.kube.get("Pod", self.ns, "ray-cluster-kuberay-head"))
        self.wait_status("rayjob-interactive-mode", "Waiting", 120)

    def test_http_mode_success(self):
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "web", mode="HTTPMode"))
        s = self.wait_status("web", "Complete")
        self.assertEqual(s["jobStatus"], "SUCCEEDED")
        self.assertIsNone(self.kube.get("Job", self.ns, "web"), "HTTPMode has no submitter Job")
        self.assertEqual(len(self.ray_submissions(s["jobId"])), 1)
        self.verify_journal()

    def test_watch_namespace_limits_the_operator_to_its_namespaces(self):
        # KubeRay's --watch-namespace: RayJobs elsewhere are not touched (before, the flag
        # was refused as unknown and the operator carried every namespace).
        other = self.ns[:30] + "-other"
        self.kube.create_namespace(other)
        op = self.start_operator(f"--watch-namespace={self.ns}")
        self.kube.create("RayJob", rayjob(other, "elsewhere", mode="HTTPMode"))
        self.kube.create("RayJob", rayjob(self.ns, "mine", mode="HTTPMode"))
        self.assertEqual(self.wait_status("mine", "Complete")["jobStatus"], "SUCCEEDED")
        self.assertEqual(self.kube.get("RayJob", other, "elsewhere").get("status", {}), {})
        self.assertEqual(self.kube.list("RayCluster", other), [])
        self.assertIn(f"in namespaces: {self.ns}", op.log())

    def test_sidecar_submitter_restart_needs_kubernetes_1_35(self):
        # KubeRay's start-up check: the gate needs the container restart rules of 1.35; this
        # API server is 1.34, so the operator refuses to start and says why.
        op = self.start_operator("--feature-gates=SidecarSubmitterRestart=true")
        code = op.proc.wait(60)
        self.assertEqual(code, 2, op.log()[-2000:])
        self.assertIn("SidecarSubmitterRestart feature gate requires K8s 1.35+", op.log())

    def replay_live(self, *args):
        done = subprocess.run([REPLAY, "--journal", self.journal, "-o", "json",
                               f"--kubeconfig={self.cp.kubeconfig}",
                               f"--ray-dashboard-address={self.ray.address}", *args],
                              capture_output=True, text=True, timeout=120)
        try:
            return done.returncode, json.loads(done.stdout)
        except ValueError:
            self.fail(f"rayjournal-replay {args}: exit {done.returncode}: {done.stdout} {done.stderr}")

    def test_diagnose_and_diff_against_the_real_cluster(self):
        # The troubleshooting checklist against the real API server and the real Ray head:
        # healthy, a RayCluster deleted behind the operator's back, a Ray record lost, drift.
        op = self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "healthy", mode="HTTPMode"))
        done = self.wait_status("healthy", "Complete")
        self.kube.create("RayJob", rayjob(self.ns, "busy", mode="HTTPMode",
                                          entrypoint="python -c 'import time; time.sleep(90)'"))
        self.wait_status("busy", "Running")
        wait_until("busy RUNNING in Ray", lambda: self.status("busy").get("jobStatus") == "RUNNING", 90)
        code, report = self.replay_live("diagnose", f"{self.ns}/healthy")
        self.assertEqual((code, report["verdict"]), (0, "ok"), report)
        self.assertTrue(report["ray"]["present"], report)
        self.assertIn("Kubernetes https://127.0.0.1", report["source"])
        self.assertEqual(self.replay_live("diff", "--against-kube")[0], 0)
        op.stop()  # from here on, the world changes behind the operator's back
        self.kube.delete("RayCluster", self.ns, self.status("busy")["rayClusterName"])
        wait_until("RayCluster gone", lambda: self.kube.get(
            "RayCluster", self.ns, self.status("busy")["rayClusterName"]) is None, 60)
        code, report = self.replay_live("diagnose", f"{self.ns}/busy")
        self.assertEqual((code, report["verdict"]), (1, "problems"), report)
        gone = self.status('busy')['rayClusterName']
        self.assertIn(f"RayCluster {gone} is missing", report["problems"])
        [item] = [c for c in report["checks"] if c["check"] == f"RayCluster {gone}"]
        self.assertEqual((item["verdict"], item["kubernetes"]), ("problem", "absent"))
        self.assertEqual(item["next"], f"kubectl -n {self.ns} get raycluster {gone} -o yaml")
        status, _ = self.ray.request("DELETE", f"/api/jobs/{done['jobId']}")
        self.assertEqual(status, 200)
        code, report = self.replay_live("diagnose", f"{self.ns}/healthy")
        self.assertEqual(code, 1, report)
        self.assertIn("Ray lost the record of a journaled submission", report["problems"])
        current = self.kube.get("RayJob", self.ns, "healthy")
        current["status"]["jobDeploymentStatus"] = "Failed"
        self.kube.update_status("RayJob", current)
        code, report = self.replay_live("diff", "--against-kube")
        self.assertEqual(code, 1, report)
        self.assertEqual([d["rayjob"] for d in report["drifted"]], [f"{self.ns}/healthy"])
        # An unreachable dashboard is never an all-clear.
        done = subprocess.run([REPLAY, "--journal", self.journal, "-o", "json",
                               f"--kubeconfig={self.cp.kubeconfig}",
                               "--ray-dashboard-address=127.0.0.1:1", "diagnose",
                               f"{self.ns}/healthy"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2, done.stdout)
        self.assertEqual(json.loads(done.stdout)["verdict"], "incomplete")

    def test_bearer_token_from_a_token_file(self):
        # The kubeconfig names a tokenFile (as projected service account tokens are read).
        op = self.start_operator(kubeconfig=self.cp.token_kubeconfig)
        self.kube.create("RayJob", rayjob(self.ns, "tok", mode="HTTPMode"))
        self.assertEqual(self.wait_status("tok", "Complete")["jobStatus"], "SUCCEEDED")
        self.assertIn("from kubeconfig", op.log())
        self.assertIn(", token from", op.log())

    def test_failure_with_backoff_limit_retries(self):
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "flaky", mode="HTTPMode",
                                          entrypoint="python -c 'import sys; sys.exit(3)'",
                                          backoffLimit=1))
        s = self.wait_status("flaky", "Failed", 240)
        self.assertEqual(s["jobStatus"], "FAILED")
        self.assertEqual(s.get("failed"), 2, s)
        # Each attempt has its own submission in the real Ray, and its own RayCluster.
        ids = {j["submission_id"] for j in self.ray.jobs()
               if (j.get("metadata") or {}).get("rayjournal.io/rayjob", "") == "flaky"
               or (j.get("submission_id") or "").startswith("flaky")}
        self.assertEqual(len(ids), 2, ids)
        self.verify_journal()

    def test_suspend_then_resume(self):
        self.start_operator()
        # Suspending needs shutdownAfterJobFinishes (KubeRay's validation rule).
        self.kube.create("RayJob", rayjob(self.ns, "pause", mode="HTTPMode",
                                          entrypoint="sleep 600", shutdownAfterJobFinishes=True))
        s = self.wait_status("pause", "Running")
        first_cluster = s["rayClusterName"]
        wait_until("Ray job RUNNING",
                   lambda: (self.ray.job(s["jobId"]) or {}).get("status") == "RUNNING", 120, 0.5)
        self.kube.patch("RayJob", self.ns, "pause", {"spec": {"suspend": True}})
        self.wait_status("pause", "Suspended")
        wait_until("the RayCluster deleted",
                   lambda: self.kube.get("RayCluster", self.ns, first_cluster) is None, 60)
        # Ray acknowledged the stop; its supervisor ends the job asynchronously.
        wait_until("the Ray job STOPPED",
                   lambda: self.ray.job(s["jobId"])["status"] == "STOPPED", 60, 0.5)
        self.kube.patch("RayJob", self.ns, "pause",
                        {"spec": {"suspend": False, "entrypoint": "echo resumed"}})
        s2 = self.wait_status("pause", "Complete")
        self.assertEqual(s2["jobStatus"], "SUCCEEDED")
        self.verify_journal()

    def test_deletion_stops_running_ray_job(self):
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "doomed", mode="HTTPMode",
                                          entrypoint="sleep 600"))
        s = self.wait_status("doomed", "Running")
        wait_until("Ray job RUNNING",
                   lambda: (self.ray.job(s["jobId"]) or {}).get("status") == "RUNNING", 120, 0.5)
        job = self.kube.get("RayJob", self.ns, "doomed")
        self.assertIn("ray.io/rayjob-finalizer", job["metadata"].get("finalizers", []))
        self.kube.delete("RayJob", self.ns, "doomed")
        wait_until("RayJob gone", lambda: self.kube.get("RayJob", self.ns, "doomed") is None, 90)
        wait_until("Ray job STOPPED",
                   lambda: self.ray.job(s["jobId"])["status"] == "STOPPED", 60, 0.5)

    def test_kill9_during_runs_no_duplicates(self):
        names = ["k1", "k2", "h1", "h2"]
        for n in names:
            mode = "HTTPMode" if n.startswith("h") else "K8sJobMode"
            self.kube.create("RayJob", rayjob(self.ns, n, mode=mode,
                                              entrypoint="sleep 3 && echo done"))
        self.kube.create("RayJob", rayjob(self.ns, "f1", mode="HTTPMode", backoffLimit=1,
                                          entrypoint="sleep 1 && exit 3"))
        self.kube.create("RayJob", rayjob(self.ns, "d1", mode="HTTPMode", entrypoint="sleep 600"))
        rng = random.Random(7)
        op = self.start_operator()
        for _ in range(4):
            time.sleep(rng.uniform(0.5, 2.5))  # kill at arbitrary points of the run
            op.kill9()
            op = self.start_operator()
        # Deletion with the finalizer, interrupted by a kill right after it was requested.
        d1 = self.wait_status("d1", "Running")
        wait_until("d1's Ray job RUNNING",
                   lambda: (self.ray.job(d1["jobId"]) or {}).get("status") == "RUNNING", 120, 0.5)
        self.kube.delete("RayJob", self.ns, "d1")
        time.sleep(0.3)
        op.kill9()
        op = self.start_operator()
        for n in names:
            s = self.wait_status(n, "Complete", 240)
            self.assertEqual(s["jobStatus"], "SUCCEEDED", (n, s))
            self.assertEqual(s.get("failed", 0), 0, "no extra attempt")
            self.assertEqual(len(self.ray_submissions(s["jobId"])), 1, "one Ray submission")
            clusters = self.kube.list("RayCluster", self.ns,
                                      f"ray.io/originated-from-cr-name={n}")
            self.assertEqual(len(clusters), 1, [c["metadata"]["name"] for c in clusters])
        all_subs = [j for j in self.ray.jobs()
                    if any((j.get("submission_id") or "").startswith(n + "-") for n in names)]
        self.assertEqual(len(all_subs), len(names), [j["submission_id"] for j in all_subs])
        f1 = self.wait_status("f1", "Failed", 240)
        self.assertEqual(f1.get("failed"), 2, "two attempts, no more")
        self.assertEqual(len([j for j in self.ray.jobs()
                              if (j.get("submission_id") or "").startswith("f1-")]), 2)
        wait_until("d1 gone", lambda: self.kube.get("RayJob", self.ns, "d1") is None, 120)
        wait_until("d1's Ray job STOPPED",
                   lambda: self.ray.job(d1["jobId"])["status"] == "STOPPED", 60, 0.5)
        self.verify_journal()

    # --- exactly-once for the job's own writes (docs/exactly-once.md) ---

    # The job of docs/exactly-once.md: one row per run in SQLite. With a key it is the one the
    # recipe gives (Ray's submission id, and the attempt the annotation adds); without one, a
    # fresh id per run, as a job that does not deduplicate writes.
    SQLITE_JOB = """
import json, os, sqlite3, sys, uuid
meta = json.loads(os.environ["RAY_JOB_CONFIG_JSON_ENV_VAR"])["metadata"]
if sys.argv[2] == "keyed":
    key = meta["job_submission_id"] + "/" + meta.get("rayjournal.io/attempt", "")
else:
    key = str(uuid.uuid4())
db = sqlite3.connect(sys.argv[1], timeout=60)
db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY)")
db.execute("INSERT OR IGNORE INTO runs VALUES (?)", (key,))
db.commit()
print("row written for", key)
"""

    def run_sqlite_job_through_a_lost_submission(self, keyed):
        """The operator submits through a proxy that SIGKILLs it once Ray has accepted, before
        it hears the answer; the job runs and Ray's record of it is deleted while the operator
        is down; the restarted operator finds no such submission and submits the same id
        again (what KubeRay does blindly on every restart). Returns the rows in the database
        and the submission ids Ray accepted."""
        work = tempfile.mkdtemp(prefix="rjonce", dir=self.work)
        script, db = os.path.join(work, "job.py"), os.path.join(work, "runs.db")
        with open(script, "w") as f:
            f.write(self.SQLITE_JOB)
        killed = []
        op = None

        def kill_operator(submission_id):
            if killed:
                return False
            killed.append(submission_id)
            op.kill9()
            return True

        proxy = RayProxy(self.ray, kill_operator)
        proxy.start()
        try:
            op = self.start_operator(dashboard=proxy.address)
            job = rayjob(self.ns, "once", mode="HTTPMode",
                         entrypoint=f"python {script} {db} {'keyed' if keyed else 'plain'}")
            if keyed:
                job["metadata"]["annotations"] = {
                    "rayjournal.io/attempt-in-submission-metadata": "true"}
            self.kube.create("RayJob", job)
            wait_until("the operator killed right after Ray accepted the submission",
                       lambda: killed and not op.alive(), 180, 0.2)
            sid = killed[0]
            wait_until("the first run SUCCEEDED",
                       lambda: (self.ray.job(sid) or {}).get("status") == "SUCCEEDED", 180, 0.5)
            # As a long-down operator would find it: Ray done with the first run, its monitor
            # included (a same-id submission inside that window is failed by Ray itself).
            wait_until("Ray's monitor of the first run ended",
                       lambda: self.ray.job_monitor_ended(sid), 60, 0.2)
            status, body = self.ray.request("DELETE", f"/api/jobs/{sid}")
            self.assertEqual(status, 200, body)
            self.assertIsNone(self.ray.job(sid), "Ray no longer knows the submission")
            self.start_operator(dashboard=proxy.address)
            s = self.wait_status("once", "Complete", 240)
            self.assertEqual(s["jobStatus"], "SUCCEEDED", s)
            self.assertEqual(s["jobId"], sid)
        finally:
            proxy.stop()
        with sqlite3.connect(db) as conn:
            rows = [r[0] for r in conn.execute("SELECT key FROM runs")]
        return rows, list(proxy.submissions)

    def test_exactly_once_with_the_submission_key(self):
        rows, submissions = self.run_sqlite_job_through_a_lost_submission(keyed=True)
        self.assertEqual(len(submissions), 2, "the lost submission was made again")
        self.assertEqual(submissions[0], submissions[1], "under the same submission id")
        self.assertEqual(rows, [submissions[0] + "/1"], "one row: the second run deduplicated")
        self.verify_journal()

    def test_without_the_key_the_resubmission_writes_twice(self):
        rows, submissions = self.run_sqlite_job_through_a_lost_submission(keyed=False)
        self.assertEqual(len(submissions), 2, submissions)
        self.assertEqual(submissions[0], submissions[1], "the same submission id both times")
        self.assertEqual(len(rows), 2, "the duplicate the recipe prevents")

    def test_watch_survives_apiserver_restart(self):
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "steady", mode="HTTPMode",
                                          entrypoint="sleep 4 && echo steady"))
        self.wait_status("steady", "Running")
        self.cp.restart_apiserver()
        # A RayJob created after the restart is only seen through a re-established watch.
        self.kube.create("RayJob", rayjob(self.ns, "after", mode="HTTPMode"))
        self.assertEqual(self.wait_status("steady", "Complete")["jobStatus"], "SUCCEEDED")
        self.assertEqual(self.wait_status("after", "Complete")["jobStatus"], "SUCCEEDED")
        self.verify_journal()

    def test_conflict_from_concurrent_writer(self):
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "contested", mode="HTTPMode",
                                          entrypoint="sleep 3 && echo ok"))
        # Another writer keeps changing the object while the operator writes its status: every
        # operator write with the older resourceVersion gets 409 and must be decided again.
        deadline = time.monotonic() + 20
        n = 0
        while time.monotonic() < deadline:
            if self.status("contested").get("jobDeploymentStatus") == "Complete":
                break
            self.kube.patch("RayJob", self.ns, "contested",
                            {"metadata": {"annotations": {"e2e/touch": str(n)}}})
            n += 1
            time.sleep(0.05)
        s = self.wait_status("contested", "Complete")
        self.assertEqual(s["jobStatus"], "SUCCEEDED")
        self.assertEqual(len(self.ray_submissions(s["jobId"])), 1)
        self.verify_journal()

    def test_leader_election_handover(self):
        lease_flags = ["--leader-elect", f"--leader-elect-namespace={self.ns}",
                       "--leader-elect-lease-duration=4", "--leader-elect-renew-deadline=3",
                       "--leader-elect-retry-period=1"]
        journal_a, journal_b = self.journal + "-a", self.journal + "-b"
        a = self.start_operator(*lease_flags, "--leader-elect-identity=a", journal=journal_a)

        def holder():
            lease = self.kube.get("Lease", self.ns, "rayjournal-operator")
            return (lease or {}).get("spec", {}).get("holderIdentity")

        wait_until("a holds the Lease", lambda: holder() == "a", 30)
        b = self.start_operator(*lease_flags, "--leader-elect-identity=b", journal=journal_b)
        wait_until("b waiting for the Lease", lambda: "waiting for Lease" in b.log(), 30)
        self.kube.create("RayJob", rayjob(self.ns, "first", mode="HTTPMode",
                                          entrypoint="sleep 6 && echo first"))
        s = self.wait_status("first", "Running")
        self.assertNotIn("RayJob " + self.ns, b.log(), "the standby did nothing")
        a.kill9()
        wait_until("b holds the Lease", lambda: holder() == "b", 30)
        self.kube.create("RayJob", rayjob(self.ns, "second", mode="HTTPMode"))
        s1 = self.wait_status("first", "Complete")
        self.assertEqual(s1["jobId"], s["jobId"], "the new leader kept the attempt's identity")
        self.assertEqual(len(self.ray_submissions(s1["jobId"])), 1, "no second submission")
        self.assertEqual(self.wait_status("second", "Complete")["jobStatus"], "SUCCEEDED")
        log_b = b.log()
        self.assertLess(log_b.index("now holds Lease"), log_b.index("RayJob " + self.ns))
        # A graceful stop releases the Lease at once.
        b.stop()
        self.assertEqual(holder(), "")
        self.verify_journal(journal_a)
        self.verify_journal(journal_b)

    def test_submitter_pod_deleted_recovers_without_resubmitting(self):
        # KubeRay's "RayJob should recover after pod deletion" (reference scenario 16).
        self.start_operator()
        self.kube.create("RayJob", rayjob(self.ns, "s16", entrypoint="sleep 10 && echo s16"))
        s = self.wait_status("s16", "Running")
        wait_until("Ray job RUNNING",
                   lambda: (self.ray.job(s["jobId"]) or {}).get("status") == "RUNNING", 120, 0.5)
        pods = self.kube.list("Pod", self.ns, "job-name=s16")
        self.assertEqual(len(pods), 1)
        self.kube.delete("Pod", self.ns, pods[0]["metadata"]["name"])
        wait_until("a replacement submitter Pod",
                   lambda: any(p["metadata"]["name"] != pods[0]["metadata"]["name"]
                               for p in self.kube.list("Pod", self.ns, "job-name=s16")), 60)
        s = self.wait_status("s16", "Complete")
        self.assertEqual(s["jobStatus"], "SUCCEEDED")
        self.assertEqual(len(self.ray_submissions(s["jobId"])), 1, "attached, not resubmitted")
        self.verify_journal()

    def test_deploy_manifests_pass_server_dry_run(self):
        deploy = os.path.join(ROOT, "deploy")
        self.cp.kubectl("apply", "-f", os.path.join(deploy, "operator/namespace.yaml"))
        out = self.cp.kubectl("apply", "--server-side", "--dry-run=server", "-k", deploy)
        for kind in ["customresourcedefinition.apiextensions.k8s.io/rayjobs.ray.io",
                     "clusterrole.rbac.authorization.k8s.io/rayjournal-operator",
                     "statefulset.apps/rayjournal-operator",
                     "poddisruptionbudget.policy/rayjournal-operator",
                     "service/rayjournal-operator"]:
            self.assertIn(kind, out)
        # KubeRay-style RayJob manifests are accepted unchanged by our CRDs.
        out = self.cp.kubectl("apply", "--server-side", "--dry-run=server", "-n", self.ns,
                              "-f", os.path.join(deploy, "samples"))
        self.assertGreaterEqual(out.count("rayjob.ray.io/"), 5, out)

    def helm_template(self, *values):
        chart = os.path.join(ROOT, "deploy/helm/rayjournal-operator")
        return subprocess.run([os.path.join(CACHE, "bin/helm"), "template", "rj", chart,
                               "--namespace", self.ns, *values],
                              capture_output=True, text=True)

    def test_helm_chart_renders_and_passes_server_dry_run(self):
        # The chart with KubeRay-style values, rendered by a real helm and admitted (server-side
        # dry run) by the real API server, CRDs included.
        rendered = self.helm_template(
            "--include-crds", "--set", "watchNamespace={team-a,team-b}",
            "--set", "image.tag=v1", "--set", "journal.size=20Gi",
            "--set", "journal.storageClassName=fast", "--set", "kubeClient.qps=50",
            "--set", "featureGates[0].name=RayClusterStatusConditions",
            "--set", "featureGates[0].enabled=false")
        self.assertEqual(rendered.returncode, 0, rendered.stderr)
        statefulset = rendered.stdout[rendered.stdout.index("kind: StatefulSet"):]
        # helm replaces a list given with --set: only the one gate remains.
        for expected in ["--watch-namespace=team-a,team-b", "--kube-api-qps=50",
                         "--feature-gates=RayClusterStatusConditions=false\n",
                         "image: \"rayjournal/operator:v1\"", "storage: 20Gi",
                         "storageClassName: fast", f"--leader-elect-namespace={self.ns}"]:
            self.assertIn(expected, statefulset)
        defaults = self.helm_template()
        self.assertIn("--feature-gates=RayClusterStatusConditions=true,RayJobDeletionPolicy=true",
                      defaults.stdout)
        self.assertNotIn("--watch-namespace", defaults.stdout)
        self.assertNotIn("CustomResourceDefinition", defaults.stdout, "CRDs only on request")
        manifest = os.path.join(self.work, f"helm-{self.ns}.yaml")
        with open(manifest, "w") as f:
            f.write(rendered.stdout)
        out = self.cp.kubectl("apply", "--server-side", "--dry-run=server", "-f", manifest)
        for kind in ["customresourcedefinition.apiextensions.k8s.io/rayjobs.ray.io",
                     "customresourcedefinition.apiextensions.k8s.io/rayclusters.ray.io",
                     "clusterrole.rbac.authorization.k8s.io/rayjournal-operator",
                     f"statefulset.apps/rayjournal-operator", "service/rayjournal-operator",
                     "poddisruptionbudget.policy/rayjournal-operator",
                     "role.rbac.authorization.k8s.io/rayjournal-operator-leases"]:
            self.assertIn(kind, out)
        # One shard: more replicas are standbys for the one leader Lease, which needs leader
        # election; shards: one replica each.
        standbys = self.helm_template("--set", "replicas=2")
        self.assertEqual(standbys.returncode, 0, standbys.stderr)
        self.assertIn("replicas: 2", standbys.stdout)
        self.assertIn("--shard-count=1", standbys.stdout)
        refused = self.helm_template("--set", "replicas=2", "--set", "leaderElectionEnabled=false")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("replicas (2) with shardCount 1 need leaderElectionEnabled", refused.stderr)
        refused = self.helm_template("--set", "replicas=3", "--set", "shardCount=2")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("replicas (3) and shardCount (2) must be equal", refused.stderr)

    def test_crd_schema_refuses_wrongly_typed_fields_at_admission(self):
        # What rayjournal's own reading calls ValidationFailed, the API server refuses first.
        # (An int32 out of range, such as ttlSecondsAfterFinished 2147483648, is admitted by
        # KubeRay's schema, which has no bounds; rayjournal's own reading refuses it,
        # ValidateTest.WronglyTypedSpecFieldsAreNamedWithTheExpectedType.)
        for field, value in [("backoffLimit", "three"), ("backoffLimit", 1.5),
                             ("suspend", "yes"), ("entrypoint", 7)]:
            with self.assertRaises(ApiError, msg=f"{field}: {value!r} was admitted") as caught:
                self.kube.create("RayJob", rayjob(self.ns, "typed", **{field: value}))
            self.assertEqual(caught.exception.status, 422, caught.exception)
            self.assertIn(field, str(caught.exception))
        # KubeRay's schema: enums and CEL rules refuse what its operator never sees.
        for field, value, says in [
                ("managedBy", "someone/else", "managedBy"),
                ("deletionStrategy", {"deletionRules": [{"policy": "DeleteEverything",
                                                         "condition": {"jobStatus": "SUCCEEDED"}}]},
                 "policy")]:
            with self.assertRaises(ApiError, msg=f"{field}: {value!r} was admitted") as caught:
                self.kube.create("RayJob", rayjob(self.ns, "enum", **{field: value}))
            self.assertEqual(caught.exception.status, 422, caught.exception)
            self.assertIn(says, str(caught.exception))
        # ... and its defaults: a worker group without numOfHosts gets 1, as on KubeRay.
        worker = {"groupName": "w", "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
                  "template": {"spec": {"containers": [{"name": "ray-worker",
                                                        "image": "rayproject/ray:2.46.0"}]}}}
        body = rayjob(self.ns, "typed-ok", backoffLimit=2, suspend=True,
                      shutdownAfterJobFinishes=True)
        body["spec"]["rayClusterSpec"]["workerGroupSpecs"] = [worker]
        del body["spec"]["submissionMode"]
        created = self.kube.create("RayJob", body)
        self.assertEqual(created["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["numOfHosts"], 1)
        self.assertEqual(created["spec"]["submissionMode"], "K8sJobMode")
        self.kube.delete("RayJob", self.ns, "typed-ok")

    def test_operator_with_deploy_rbac_only_and_metrics(self):
        deploy = os.path.join(ROOT, "deploy/operator")
        for f in ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]:
            self.cp.kubectl("apply", "-f", os.path.join(deploy, f))
        port = free_port()
        op = self.start_operator("--leader-elect", "--leader-elect-namespace=rayjournal-system",
                                 f"--metrics-bind-address=127.0.0.1:{port}",
                                 kubeconfig=self.cp.operator_kubeconfig)

        def get(path):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        wait_until("/readyz 200", lambda: get("/readyz")[0] == 200, 60, 0.3)
        self.assertEqual(get("/healthz")[0], 200)
        self.kube.create("RayJob", rayjob(self.ns, "least", mode="K8sJobMode"))
        s = self.wait_status("least", "Complete")
        self.assertEqual(s["jobStatus"], "SUCCEEDED")
        status, text = get("/metrics")
        self.assertEqual(status, 200)
        self.assertIn(f'kuberay_job_deployment_status{{deployment_status="Complete",name="least",'
                      f'namespace="{self.ns}"', text)
        self.assertRegex(text, r'rayjournal_reconciles_total\{result="ok"\} [1-9]')
        self.assertRegex(text, r'rayjournal_reconcile_duration_seconds_count [1-9]')
        self.assertIn("rayjournal_leader 1", text)
        self.assertIn('rayjournal_ray_api_calls_total{outcome="ok",verb="get"}', text)
        # Reconciles read from the informer caches: reads are not API calls.
        gets = sum(float(v) for v in re.findall(
            r'rayjournal_kube_api_calls_total\{code="[0-9]+",kind="[A-Za-z]+",verb="get"\} ([0-9.e+]+)',
            text))
        self.assertLess(gets, 5, "GETs hit the API server instead of the caches")
        forbidden = re.findall(r'rayjournal_kube_api_calls_total\{code="403"[^\n]*', text)
        self.assertEqual(forbidden, [], "the operator needed more than deploy/rbac.yaml grants")
        self.assertNotIn("forbidden", op.log().lower())
        events = self.kube.list("Event", self.ns)
        self.assertTrue(any(e.get("reason") == "CreatedRayCluster" for e in events), events)

    def test_two_shards_split_rayjobs(self):
        names = [f"s{i}" for i in range(6)]
        journals = [self.journal + "-shard0", self.journal + "-shard1"]
        for i in range(2):
            self.start_operator("--shard-count=2", f"--shard-index={i}",
                                f"--leader-elect-namespace={self.ns}",
                                "--leader-elect-retry-period=1", "--leader-elect-renew-deadline=3",
                                "--leader-elect-lease-duration=4", journal=journals[i])
        for n in names:
            self.kube.create("RayJob", rayjob(self.ns, n, mode="HTTPMode", entrypoint="echo hi"))
        for n in names:
            self.assertEqual(self.wait_status(n, "Complete")["jobStatus"], "SUCCEEDED")
        for op in self.operators:
            op.stop()
        owned = []
        for j in journals:
            state = json.loads(run([REPLAY, "state", "--journal", j]).stdout)
            owned.append({k.split("/")[1] for k in state["jobs"] if k.startswith(self.ns + "/")})
            self.verify_journal(j)
        self.assertEqual(owned[0] & owned[1], set(), "no RayJob handled by both shards")
        self.assertEqual(owned[0] | owned[1], set(names))
        self.assertTrue(owned[0] and owned[1], f"both shards got work: {owned}")
        leases = [l["metadata"]["name"] for l in self.kube.list("Lease", self.ns)]
        self.assertEqual(len([l for l in leases if "-bucket-" in l]), 32, leases)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[4:])
