"""e2e tier, autoscaling: RayJobs whose RayCluster the real Ray autoscaler sizes, on the real
control plane (see harness.py). Nothing is faked in these namespaces: the kubelet runs the head's
Ray container and its autoscaler sidecar from the commands and env the operator wrote, the
sidecar reads a token of the ServiceAccount the operator created (so a missing Role rule fails
the test), and Ray starts on every worker Pod from the operator's own command.
Usage: autoscaling_test.py OPERATOR REPLAY REPO_ROOT"""

import json
import os
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import OperatorCase, run, wait_until  # noqa: E402

OPERATOR, REPLAY, ROOT = sys.argv[1:4]
CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))
IMAGE = "rayproject/ray:2.60.0"
# Two tasks of one CPU each at once, on a head that offers none: only workers can run them.
ENTRYPOINT = ("python -c \"import ray, time; ray.init(); "
              "f = ray.remote(num_cpus=1)(lambda: (time.sleep(8), "
              "ray.get_runtime_context().get_node_id())[1]); "
              "print('ran on', len(set(ray.get([f.remote() for _ in range(2)]))), 'nodes')\"")
IDLE_SECONDS = 10


def autoscaling_rayjob(ns, name):
    params = {"object-store-memory": "100000000"}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": name, "namespace": ns},
            "spec": {
                "entrypoint": ENTRYPOINT, "shutdownAfterJobFinishes": False,
                "rayClusterSpec": {
                    "rayVersion": "2.60.0", "enableInTreeAutoscaling": True,
                    "autoscalerOptions": {"idleTimeoutSeconds": IDLE_SECONDS},
                    "headGroupSpec": {
                        "rayStartParams": dict(params, **{"num-cpus": "0"}),
                        "template": {"spec": {"restartPolicy": "Never", "containers": [{
                            "name": "ray-head", "image": IMAGE,
                            "ports": [{"containerPort": 8265, "name": "dashboard"}]}]}}},
                    "workerGroupSpecs": [{
                        "groupName": "cpu", "replicas": 0, "minReplicas": 0, "maxReplicas": 3,
                        "rayStartParams": dict(params, **{"num-cpus": "1"}),
                        "template": {"spec": {"containers": [{"name": "ray-worker",
                                                              "image": IMAGE}]}}}]}}}


class ScaleWatch(threading.Thread):
    """Polls the RayCluster and its worker Pods every 50 ms, recording what a scale-up and a
    scale-down did: the largest replica count the autoscaler asked for, every Pod it named in
    workersToDelete, and every worker Pod the operator created (by uid) and saw go."""

    def __init__(self, kube, ns, cluster):
        super().__init__(daemon=True)
        self.kube, self.ns, self.cluster = kube, ns, cluster
        self.max_replicas = 0
        self.named = set()
        self.created = {}  # uid -> Pod name
        self.gone = set()  # names of worker Pods seen and no longer there
        self.stopping = threading.Event()
        self.errors = []

    def run(self):
        while not self.stopping.wait(0.05):
            try:
                self.poll()
            except Exception as e:  # noqa: BLE001 - reported by the test
                self.errors.append(str(e))

    def poll(self):
        rc = self.kube.get("RayCluster", self.ns, self.cluster)
        group = rc["spec"]["workerGroupSpecs"][0]
        self.max_replicas = max(self.max_replicas, group.get("replicas", 0))
        self.named |= set(group.get("scaleStrategy", {}).get("workersToDelete") or [])
        pods = self.kube.list("Pod", self.ns, f"ray.io/cluster={self.cluster},ray.io/group=cpu")
        live = set()
        for pod in pods:
            self.created[pod["metadata"]["uid"]] = pod["metadata"]["name"]
            live.add(pod["metadata"]["name"])
        self.gone |= set(self.created.values()) - live

    def stop(self):
        """Stops polling, then looks once more: a Pod that went after the last poll (the test
        saw it gone first) still counts as gone."""
        self.stopping.set()
        self.join(5)
        try:
            self.poll()
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.errors.append(str(e))


class Autoscaling(OperatorCase):
    operator, replay, cache, root = OPERATOR, REPLAY, CACHE, ROOT
    prefix = "rjauto-"

    def setUp(self):
        super().setUp()
        self.kubelet.real_namespaces.add(self.ns)

    def start_autoscaling_job(self, name):
        self.kube.create("RayJob", autoscaling_rayjob(self.ns, name))
        cluster = wait_until("the RayJob's RayCluster",
                             lambda: self.status(name).get("rayClusterName"), 60, 0.1)
        watch = ScaleWatch(self.kube, self.ns, cluster)
        watch.start()
        return cluster, watch

    def timeline(self, target):
        return [json.loads(line) for line in
                run([REPLAY, "--journal", self.journal, "timeline", "--json", target])
                .stdout.splitlines()]

    def assert_rbac_owned_by(self, cluster):
        rc = self.kube.get("RayCluster", self.ns, cluster)
        for kind in ("ServiceAccount", "Role", "RoleBinding"):
            obj = self.kube.get(kind, self.ns, cluster)
            self.assertIsNotNone(obj, f"{kind} {cluster}")
            self.assertEqual([r["uid"] for r in obj["metadata"]["ownerReferences"]],
                             [rc["metadata"]["uid"]], kind)

    def assert_scaled_up_and_down(self, name, cluster, watch):
        """The job ran on workers the autoscaler asked for and the operator built; once idle,
        exactly the Pods the autoscaler named in workersToDelete went."""
        s = self.wait_status(name, "Complete", 420)
        self.assertEqual(s["jobStatus"], "SUCCEEDED", s)
        self.assertGreaterEqual(watch.max_replicas, 1, "the autoscaler asked for workers")
        workers = set(watch.created.values())
        self.assertEqual(len(workers), len(watch.created), "one Pod per name: no duplicate")
        self.assertLessEqual(len(workers), watch.max_replicas, (workers, watch.max_replicas))
        head = self.kube.get("Pod", self.ns, cluster + "-head")
        self.assertEqual([c["name"] for c in head["spec"]["containers"]],
                         ["ray-head", "autoscaler"])
        self.assertEqual(head["spec"]["serviceAccountName"], cluster)
        wait_until("the idle workers scaled down to none",
                   lambda: not self.kube.list("Pod", self.ns,
                                              f"ray.io/cluster={cluster},ray.io/group=cpu") and
                   self.kube.get("RayCluster", self.ns, cluster)["spec"]["workerGroupSpecs"][0]
                   .get("replicas") == 0, IDLE_SECONDS + 150, 0.5)
        watch.stop()
        self.assertEqual(watch.errors, [])
        self.assertEqual(watch.gone, workers, "every worker went")
        self.assertLessEqual(watch.gone, watch.named, "only Pods the autoscaler named went")
        self.assertEqual(self.kube.get("Pod", self.ns, cluster + "-head")["metadata"]["uid"],
                         head["metadata"]["uid"], "the head stayed")
        return workers

    def assert_timelines_show_the_autoscaler(self, name, cluster, workers):
        records = self.timeline(f"raycluster/{self.ns}/{cluster}")
        changes = [r["body"] for r in records if r["body"].get("observation") == "SpecChanged"]
        self.assertTrue(changes, "the autoscaler's spec changes are journaled")
        self.assertTrue(all(c["changed_by"] not in ("", "rayjournal") for c in changes), changes)
        deleted = {r["body"]["target"] for r in records
                   if r["type"] == "Intent" and r["body"]["action"] == "DeletePod"}
        self.assertEqual(deleted, workers, "a DeletePod intent for each named Pod, no other")
        job_text = "\n".join(r["text"] for r in self.timeline(f"{self.ns}/{name}"))
        self.assertIn(f"RayCluster {cluster}: observe  spec changed", job_text)
        self.assertIn(f"RayCluster {cluster}: intend   DeletePod", job_text)

    def test_the_real_autoscaler_scales_workers_up_and_down(self):
        """Ray's own autoscaler, in the head Pod the operator built, asks for workers for a job
        that needs CPUs the head does not offer; the operator creates them, the job runs on
        them, and once they are idle the autoscaler names them in workersToDelete and the
        operator deletes exactly those."""
        self.start_operator(dashboard="127.0.0.1:8265")  # the head Service's dashboard port
        cluster, watch = self.start_autoscaling_job("grow")
        workers = self.assert_scaled_up_and_down("grow", cluster, watch)
        self.assert_rbac_owned_by(cluster)
        self.assert_timelines_show_the_autoscaler("grow", cluster, workers)
        self.verify_journal()

    def test_operator_killed_during_a_scale_up(self):
        """SIGKILL of the operator right after the autoscaler asked for workers: the new
        operator resolves what was in doubt and finishes the scale-up without a second Pod of
        any name; the scale-down afterwards is as without the kill."""
        op = self.start_operator(dashboard="127.0.0.1:8265")
        cluster, watch = self.start_autoscaling_job("killed")
        wait_until("the autoscaler asking for workers", lambda: watch.max_replicas > 0, 180, 0.05)
        op.kill9()
        self.start_operator(dashboard="127.0.0.1:8265")
        workers = self.assert_scaled_up_and_down("killed", cluster, watch)
        self.assert_timelines_show_the_autoscaler("killed", cluster, workers)
        summary = json.loads(run([REPLAY, "--journal", self.journal, "summary", "-o", "json"])
                             .stdout)
        self.assertTrue(any(r["epoch"] == 2 for r in summary["restarts"]), summary["restarts"])
        self.verify_journal()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[4:])
