"""e2e tier on the real node: Volcano's scheduler (vc-scheduler, built from volcano.sh/volcano by
scripts/build-control-plane.sh) gang-schedules the RayJobs of the operator deployed by its chart
with `batchScheduler.name=volcano`. Usage: volcano_node_test.py REPO_ROOT

- A RayJob whose gang does not fit the 2-CPU node (a head and three 1-CPU workers) has all of its
  Pods Pending, none Running, its PodGroup Pending: no half of a cluster holds the node.
- One that fits beside it (a head and one worker) runs to SUCCEEDED, its Pods scheduled by
  Volcano, and once its cluster is deleted its PodGroup is released (minMember 0).
The scheduler runs as a host process beside the node's kube-scheduler (which leaves Pods of
schedulerName volcano alone), with Volcano's CRDs and its default Queue; it is stopped and the
operator reinstalled without Volcano at the end.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeclient  # noqa: E402

ROOT = sys.argv[1]
CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))
RAY_IMAGE = "docker.io/rayproject/ray:2.60.0"
NS = "volcano-gang"
SCHEDULER_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates},
            {name: proportion}, {name: nodeorder}, {name: binpack}]
"""
KUBECONFIG = None
SCHEDULER = None
WORK = tempfile.mkdtemp(prefix="volcano-e2e-")


def kubectl(*args, check=True, input=None):
    return nodeclient.kubectl(CACHE, KUBECONFIG, *args, check=check, input=input)


def get(kind, name=None):
    done = kubectl("-n", NS, "get", kind, *([name] if name else []), "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


wait_until = nodeclient.wait_until


def rayjob(name, worker_cpu, workers):
    def resources(cpu):
        return {"requests": {"cpu": cpu, "memory": "512Mi"}, "limits": {"cpu": cpu, "memory": "2Gi"}}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "namespace": NS, "labels": {"volcano.sh/queue-name": "default"}},
            "spec": {"entrypoint": "python -c \"import ray; ray.init(); print(ray.cluster_resources())\"",
                     "shutdownAfterJobFinishes": True,
                     "submitterPodTemplate": {"spec": {"restartPolicy": "Never", "containers": [{
                         "name": "submitter", "image": RAY_IMAGE,
                         "resources": {"requests": {"cpu": "50m", "memory": "200Mi"}}}]}},
                     "rayClusterSpec": {
                         "headGroupSpec": {"rayStartParams": {"num-cpus": "1"}, "template": {"spec": {
                             "containers": [{"name": "ray-head", "image": RAY_IMAGE,
                                             "resources": resources("200m")}]}}},
                         "workerGroupSpecs": [{"groupName": "w", "replicas": workers,
                                               "minReplicas": workers, "maxReplicas": workers,
                                               "rayStartParams": {}, "template": {"spec": {
                                                   "containers": [{"name": "ray-worker", "image": RAY_IMAGE,
                                                                   "resources": resources(worker_cpu)}]}}}]}}}


def setUpModule():
    global KUBECONFIG, SCHEDULER
    KUBECONFIG = nodeclient.kubeconfig(nodeclient.cluster(ROOT, "up"))
    nodeclient.cluster(ROOT, "images", RAY_IMAGE)
    for crd in sorted(os.listdir(f"{CACHE}/volcano-crds")):
        kubectl("apply", "--server-side", "-f", f"{CACHE}/volcano-crds/{crd}")
    kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/podgroups.scheduling.volcano.sh",
            "crd/queues.scheduling.volcano.sh", "crd/numatopologies.nodeinfo.volcano.sh")
    kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
        "metadata": {"name": "default"}, "spec": {"weight": 1, "reclaimable": True}}))
    conf = os.path.join(WORK, "scheduler.conf")
    with open(conf, "w") as f:
        f.write(SCHEDULER_CONF)
    with open(os.path.join(WORK, "vc-scheduler.log"), "w") as log:  # the child keeps its own copy
        SCHEDULER = subprocess.Popen(
            [f"{CACHE}/bin/vc-scheduler", "--kubeconfig", KUBECONFIG, "--scheduler-conf", conf,
             "--leader-elect=false", "--listen-address", "127.0.0.1:18181",
             "--healthz-address", "127.0.0.1:18182"],
            stdout=log, stderr=subprocess.STDOUT)
    nodeclient.cluster(ROOT, "install-operator", "--set", "replicas=1", "--set", "logging.format=text",
                       "--set", "batchScheduler.name=volcano")


def tearDownModule():
    if SCHEDULER:
        SCHEDULER.terminate()
        SCHEDULER.wait(30)
    kubectl("delete", "namespace", NS, "--timeout=120s", check=False)
    nodeclient.cluster(ROOT, "install-operator", "--set", "replicas=1", "--set", "logging.format=text")


class VolcanoGangTest(unittest.TestCase):
    def test_a_gang_that_does_not_fit_waits_whole_and_one_that_fits_runs(self):
        kubectl("create", "namespace", NS)
        kubectl("apply", "-f", "-", input=json.dumps(rayjob("too-big", "1", 3)))
        kubectl("apply", "-f", "-", input=json.dumps(rayjob("fits", "200m", 1)))
        wait_until("fits SUCCEEDED", lambda: (get("rayjob", "fits") or {}).get("status", {}).get(
            "jobStatus") == "SUCCEEDED", 400, 2)
        big = get("pod")["items"]
        big = [p for p in big if p["metadata"]["name"].startswith("too-big")]
        self.assertEqual(len(big), 4, "the head and three workers exist")
        self.assertEqual({p["status"].get("phase") for p in big}, {"Pending"},
                         "none of a gang that does not fit may start")
        self.assertTrue(all(p["spec"]["schedulerName"] == "volcano" and not p["spec"].get("nodeName")
                            for p in big))
        self.assertEqual(get("podgroup", "ray-too-big-pg")["status"].get("phase"), "Pending")
        self.assertEqual(get("podgroup", "ray-too-big-pg")["spec"]["minMember"], 4)
        submitter = get("job", "fits")["spec"]["template"]
        self.assertEqual(submitter["metadata"]["annotations"]["scheduling.k8s.io/group-name"], "ray-fits-pg")
        wait_until("fits' PodGroup released", lambda: get("podgroup", "ray-fits-pg")["spec"].get(
            "minMember", 0) == 0, 300, 2)
        events = kubectl("-n", NS, "get", "events", "--field-selector",
                         "reason=BatchSchedulerCleanedUp", "-o", "name").stdout
        self.assertTrue(events.strip(), "the release is said in an Event")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[2:]], verbosity=2)
