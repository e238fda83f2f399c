"""e2e tier on the real node (scripts/cluster.sh: kubelet, containerd, kube-scheduler, kube-proxy,
CoreDNS, the local-path provisioner): the operator as users deploy it, the Helm chart's
StatefulSet, with real Ray in real containers. Usage: node_test.py REPO_ROOT

- RayJobs of the four submission modes complete while the operator's Pod is force-deleted (the
  StatefulSet controller brings rayjournal-operator-0 back on the same claim) and, separately, its
  container is SIGKILLed through containerd: one RayCluster, one submitter Job and one Ray
  submission each; `kubectl exec ... rayjournal-replay verify/timeline` read the journal.
- A second operator forced onto the same journal volume while the first runs waits for the lock,
  says so in its log and its readiness, and takes over once the first is gone; the journal's
  epochs never interleave.
- Two replicas with --leader-elect: deleting the leader's Pod hands the Lease to the standby,
  which finishes a RayJob created after the handover.
The cluster is brought up by this test if it is not (scripts/cluster.sh up) and left up; the
e2e.node_down test takes it down and checks that nothing is left behind.
"""
import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeclient  # noqa: E402

ROOT = sys.argv[1]
CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))
NS_OP = "rayjournal-system"
STS = "rayjournal-operator"
RAY_IMAGE = "docker.io/rayproject/ray:2.60.0"
JOURNAL = "/var/lib/rayjournal/journal"
MODES = {"k8sjob": "K8sJobMode", "http": "HTTPMode", "sidecar": "SidecarMode",
         "interactive": "InteractiveMode"}
ENTRYPOINT = "python -c \"import ray, time; ray.init(); time.sleep({s}); print('done')\""
# A job that runs until the test says so: it waits for the file `go` in a host directory mounted
# into the head (the entrypoint runs on the head in every mode), so the kills land while it runs
# however slowly the 2-CPU node starts four Ray heads.
SIGNALLED = ("python -c \"import os, ray, time; ray.init(); "
             "[time.sleep(0.5) for _ in range(1200) if not os.path.exists('/signal/go')]; "
             "print('done')\"")
SIGNAL_ROOT = os.path.join(nodeclient.NODE_ROOT, "e2e-signal")
# The chart as a platform team sets it: KubeRay's configuration file gives every Ray head a log
# sidecar, and every Ray Pod a label and (in its Ray container) an environment variable.
OPERATOR_VALUES = [
    "--set", "replicas=1", "--set", "logging.format=text", "--set", "configuration.enabled=true",
    "--set-json", "configuration.headSidecarContainers=" + json.dumps([{
        "name": "log-tail", "image": RAY_IMAGE,
        # Ends on SIGTERM, as a log shipper does (a bare sleep as PID 1 ignores it and holds
        # its Pod, and the node's CPU, for the whole grace period).
        "command": ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep infinity & wait"],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]),
    "--set-json", 'configuration.defaultPodLabels={"platform.example/team":"ml"}',
    "--set-json", 'configuration.defaultContainerEnvs=[{"name":"PLATFORM_REGION","value":"node-1"}]']


wait_until = nodeclient.wait_until


def cluster(*args):
    return nodeclient.cluster(ROOT, *args)


def kubectl(*args, check=True, input=None):
    return nodeclient.kubectl(CACHE, KUBECONFIG, *args, check=check, input=input)


def get(kind, ns, name=None, selector=None):
    args = ["-n", ns, "get", kind, *([name] if name else []), "-o", "json"]
    if selector:
        args += ["-l", selector]
    done = kubectl(*args, check=False)
    if done.returncode:
        return None
    return json.loads(done.stdout)


def rayjob(ns, name, mode, seconds=None, signal_dir=None):
    """A RayJob whose Ray job sleeps `seconds`, or runs until `signal_dir`/go exists."""
    container = {"name": "ray-head", "image": RAY_IMAGE,
                 "resources": {"requests": {"cpu": "100m", "memory": "512Mi"},
                               "limits": {"cpu": "1", "memory": "2Gi"}}}
    pod = {"containers": [container]}
    if signal_dir:
        container["volumeMounts"] = [{"name": "signal", "mountPath": "/signal"}]
        pod["volumes"] = [{"name": "signal", "hostPath": {"path": signal_dir,
                                                          "type": "DirectoryOrCreate"}}]
    head = {"rayStartParams": {"num-cpus": "1", "dashboard-host": "0.0.0.0"},
            "template": {"spec": pod}}
    spec = {"submissionMode": mode, "shutdownAfterJobFinishes": False,
            "rayClusterSpec": {"headGroupSpec": head}}
    if mode != "InteractiveMode":
        spec["entrypoint"] = SIGNALLED if signal_dir else ENTRYPOINT.format(s=seconds)
    if mode == "K8sJobMode":
        spec["submitterPodTemplate"] = {"spec": {"restartPolicy": "Never", "containers": [{
            "name": "ray-job-submitter", "image": RAY_IMAGE,
            "resources": {"requests": {"cpu": "50m", "memory": "200Mi"},
                          "limits": {"cpu": "500m", "memory": "1Gi"}}}]}}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def operator_pod(index=0):
    return get("pod", NS_OP, f"{STS}-{index}")


def pod_ready(pod):
    if not pod or pod["metadata"].get("deletionTimestamp"):
        return False
    conds = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conds)


def replay(pod_name, *args, check=True):
    return kubectl("-n", NS_OP, "exec", pod_name, "--", "rayjournal-replay", "--journal", JOURNAL,
                   *args, check=check)


def ray_jobs_of(ns, cluster_name):
    """The Ray jobs the cluster's head knows, through the API server's service proxy."""
    svc = f"{cluster_name}-head-svc"
    done = kubectl("get", "--raw", f"/api/v1/namespaces/{ns}/services/{svc}:8265/proxy/api/jobs/")
    return json.loads(done.stdout)


KUBECONFIG = None


def api_get(path):
    """(status, body) of a GET through the API server as the cluster's admin, whatever the
    status (kubectl --raw hides the body of an error)."""
    pki = nodeclient.PKI
    context = ssl.create_default_context(cafile=f"{pki}/ca.crt")
    context.load_cert_chain(f"{pki}/admin.crt", f"{pki}/admin.key")
    server = json.loads(kubectl("config", "view", "-o", "json").stdout)["clusters"][0]
    try:
        with urllib.request.urlopen(server["cluster"]["server"] + path, context=context,
                                    timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def setUpModule():
    global KUBECONFIG
    KUBECONFIG = nodeclient.kubeconfig(cluster("up"))
    cluster("images", RAY_IMAGE)
    cluster("install-operator", *OPERATOR_VALUES)


class StatefulSetTest(unittest.TestCase):
    def setUp(self):
        self.ns = f"node-{self._testMethodName[5:20].replace('_', '-')}-{int(time.time()) % 10000}"
        kubectl("create", "namespace", self.ns)
        # Its Ray clusters hold CPU requests on a 2-CPU node: gone before the next test starts.
        self.addCleanup(kubectl, "delete", "namespace", self.ns, "--timeout=120s", check=False)

    def apply(self, obj):
        kubectl("apply", "-f", "-", input=json.dumps(obj))

    def status(self, name):
        job = get("rayjob", self.ns, name)
        return (job or {}).get("status", {})

    def wait_status(self, name, deployment, timeout=300):
        return wait_until(f"{self.ns}/{name} {deployment}", lambda: (
            lambda s: s if s.get("jobDeploymentStatus") == deployment else None)(
            self.status(name)), timeout, 1)

    def force_delete_operator(self):
        old = operator_pod()
        kubectl("-n", NS_OP, "delete", "pod", f"{STS}-0", "--grace-period=0", "--force")
        return wait_until("a new Ready rayjournal-operator-0", lambda: (
            lambda p: p if pod_ready(p) and p["metadata"]["uid"] != old["metadata"]["uid"]
            else None)(operator_pod()), 180)

    def kill_operator_container(self):
        pod = operator_pod()
        restarts = pod["status"]["containerStatuses"][0]["restartCount"]
        nodeclient.kill_containers(pod)
        return wait_until("the killed container restarted and Ready", lambda: (
            lambda p: p if pod_ready(p) and
            p["status"]["containerStatuses"][0]["restartCount"] > restarts else None)(
            operator_pod()), 180)

    def submit_interactive(self, name):
        s = self.wait_status(name, "Waiting")
        head = wait_until("the interactive cluster's head Ready", lambda: (
            lambda pods: pods if pods and pod_ready(pods[0]) else None)(
            get("pod", self.ns, selector=f"ray.io/cluster={s['rayClusterName']},"
                "ray.io/node-type=head")["items"]), 300)
        kubectl("-n", self.ns, "exec", head[0]["metadata"]["name"], "--", "ray", "job", "submit",
                "--submission-id", f"{name}-by-hand", "--no-wait", "--",
                "python", "-c", "print('interactive')")
        kubectl("-n", self.ns, "patch", "rayjob", name, "--type=merge",
                "-p", json.dumps({"spec": {"jobId": f"{name}-by-hand"}}))

    def check_one_of_each(self, name, mode):
        s = self.status(name)
        self.assertEqual((s.get("jobStatus"), s.get("failed", 0)), ("SUCCEEDED", 0), (name, s))
        clusters = get("raycluster", self.ns, selector=f"ray.io/originated-from-cr-name={name}")
        self.assertEqual([c["metadata"]["name"] for c in clusters["items"]],
                         [s["rayClusterName"]], f"{name}: one RayCluster")
        if mode == "K8sJobMode":
            jobs = get("job", self.ns)["items"]
            self.assertEqual([j["metadata"]["name"] for j in jobs
                              if j["metadata"]["name"].startswith(name)], [name])
        submissions = [j.get("submission_id") for j in ray_jobs_of(self.ns, s["rayClusterName"])]
        self.assertEqual(submissions, [s["jobId"]], f"{name}: one Ray submission")

    def epochs_in_order(self, pod_name):
        lines = replay(pod_name, "-o", "json", "export").stdout.splitlines()
        records = sorted((json.loads(line) for line in lines if line.strip()),
                         key=lambda r: r["seq"])
        epochs = [r["epoch"] for r in records]
        self.assertEqual(epochs, sorted(epochs), "records of an older epoch after a newer one")
        return sorted(set(epochs))

    def check_platform_configuration(self, name):
        """What the configuration file gives a Ray head, in the Pod the kubelet runs."""
        cluster_name = self.status(name)["rayClusterName"]
        head = get("pod", self.ns, selector=f"ray.io/cluster={cluster_name},"
                   "ray.io/node-type=head")["items"][0]
        self.assertEqual(head["metadata"]["labels"].get("platform.example/team"), "ml")
        containers = [c["name"] for c in head["spec"]["containers"]]
        self.assertEqual(containers[-1], "log-tail", containers)
        ready = {c["name"]: c["ready"] for c in head["status"]["containerStatuses"]}
        self.assertTrue(ready.get("log-tail"), head["status"]["containerStatuses"])
        region = kubectl("-n", self.ns, "exec", head["metadata"]["name"], "-c", containers[0],
                         "--", "printenv", "PLATFORM_REGION").stdout.strip()
        self.assertEqual(region, "node-1")

    def test_four_modes_survive_a_forced_delete_and_a_runtime_kill(self):
        signal_dir = os.path.join(SIGNAL_ROOT, self.ns)
        os.makedirs(signal_dir, exist_ok=True)
        self.addCleanup(shutil.rmtree, signal_dir, True)
        for short, mode in MODES.items():
            self.apply(rayjob(self.ns, short, mode, signal_dir=signal_dir))
        for short in ("k8sjob", "http", "sidecar"):
            wait_until(f"{short}'s Ray job RUNNING", lambda: self.status(short).get(
                "jobStatus") in ("RUNNING", "SUCCEEDED"), 300, 1)
        still_running = [n for n in ("k8sjob", "http", "sidecar")
                         if self.status(n).get("jobDeploymentStatus") == "Running"]
        self.assertEqual(len(still_running), 3, "the kills must come while the jobs run")
        self.check_platform_configuration("k8sjob")
        epochs_before = self.epochs_in_order(f"{STS}-0")
        new = self.force_delete_operator()
        log = kubectl("-n", NS_OP, "logs", new["metadata"]["name"]).stdout
        self.assertIn("recover", log.lower())
        self.kill_operator_container()
        self.submit_interactive("interactive")
        for short in ("k8sjob", "http", "sidecar"):
            self.assertEqual(self.status(short).get("jobStatus"), "RUNNING", short)
        with open(os.path.join(signal_dir, "go"), "w"):
            pass
        for short, mode in MODES.items():
            self.wait_status(short, "Complete", 400)
            self.check_one_of_each(short, mode)
        verify = replay(f"{STS}-0", "verify", check=False)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        timeline = replay(f"{STS}-0", "timeline", f"{self.ns}/k8sjob").stdout
        self.assertIn(f"{self.ns}/k8sjob", timeline)
        epochs_after = self.epochs_in_order(f"{STS}-0")
        self.assertGreaterEqual(len(epochs_after), len(epochs_before) + 2,
                                "one epoch per start: the forced delete and the kill")

    def test_the_operator_runs_as_the_chart_says(self):
        """Non-root, read-only root filesystem, the journal on its claim (what e2e.image once
        imitated with podman, here enforced by a real kubelet)."""
        pod = f"{STS}-0"
        uid = kubectl("-n", NS_OP, "exec", pod, "--", "id", "-u").stdout.strip()
        self.assertEqual(uid, "65532")
        root = kubectl("-n", NS_OP, "exec", pod, "--", "touch", "/probe", check=False)
        self.assertNotEqual(root.returncode, 0)
        self.assertIn("Read-only file system", root.stderr)
        journal = kubectl("-n", NS_OP, "exec", pod, "--", "touch", JOURNAL + "/../probe",
                          check=False)
        self.assertEqual(journal.returncode, 0, journal.stderr)
        claim = get("pvc", NS_OP, f"journal-{STS}-0")
        self.assertEqual((claim["status"]["phase"], claim["spec"]["storageClassName"]),
                         ("Bound", "local-path"))

    def intruder(self):
        """A Pod running the operator's container on rayjournal-operator-0's journal claim,
        without leader election: only the journal's lock can keep it from acting."""
        sts = get("statefulset", NS_OP, STS)
        pod_spec = json.loads(json.dumps(sts["spec"]["template"]["spec"]))
        container = pod_spec["containers"][0]
        # Without the configuration file either: it turns leader election on.
        container["args"] = [a for a in container["args"]
                             if not a.startswith(("--leader-elect", "--config"))]
        pod_spec["volumes"] = pod_spec.get("volumes", []) + [{
            "name": "journal", "persistentVolumeClaim": {"claimName": f"journal-{STS}-0"}}]
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "intruder", "namespace": NS_OP}, "spec": pod_spec}

    def scale(self, replicas):
        kubectl("-n", NS_OP, "scale", "statefulset", STS, f"--replicas={replicas}")

    def test_a_second_operator_on_the_same_journal_waits_for_the_lock(self):
        self.apply(self.intruder())
        try:
            wait_until("the intruder waiting for the lock", lambda: "waiting for it to exit" in
                       kubectl("-n", NS_OP, "logs", "intruder", check=False).stdout, 120)
            self.apply(rayjob(self.ns, "during", "HTTPMode", seconds=5))
            self.wait_status("during", "Running")  # rayjournal-operator-0 still acts
            self.assertFalse(pod_ready(get("pod", NS_OP, "intruder")), "ready without the lock")
            code, body = api_get(f"/api/v1/namespaces/{NS_OP}/pods/intruder:8080/proxy/readyz")
            self.assertEqual(code, 503, body)
            self.assertIn("another process holds its lock", body)
            self.scale(0)
            wait_until("the intruder Ready with the lock", lambda: pod_ready(
                get("pod", NS_OP, "intruder")), 180)
            self.assertIn("the lock is ours", kubectl("-n", NS_OP, "logs", "intruder").stdout)
            self.wait_status("during", "Complete")  # the intruder finished it
            self.epochs_in_order("intruder")
        finally:
            kubectl("-n", NS_OP, "delete", "pod", "intruder", "--wait=true", check=False)
            self.scale(1)
            wait_until("rayjournal-operator-0 Ready again", lambda: pod_ready(operator_pod()), 180)
        self.epochs_in_order(f"{STS}-0")

    def lease_holder(self):
        leases = get("lease", NS_OP)["items"]
        holders = [(lease.get("spec") or {}).get("holderIdentity") or "" for lease in leases]
        return next((h for h in holders if h.startswith(STS)), "")

    def test_two_replicas_hand_over_the_lease_when_the_leader_pod_is_deleted(self):
        cluster("install-operator", *OPERATOR_VALUES, "--set", "replicas=2")
        try:
            wait_until("the standby waiting for the Lease", lambda: "leader election: waiting for Lease"
                       in kubectl("-n", NS_OP, "logs", f"{STS}-1", check=False).stdout, 180)
            leader = wait_until("a leader", self.lease_holder, 60)
            leader_pod = leader.split("_")[0]
            kubectl("-n", NS_OP, "delete", "pod", leader_pod, "--wait=false")
            self.apply(rayjob(self.ns, "after-handover", "HTTPMode", seconds=3))
            # Another process: the standby, or the leader Pod's replacement, which the
            # StatefulSet brings back under the same name and may win the race for the Lease
            # (each process has an identity of its own: hostname and random digits).
            new_leader = wait_until("another process holding the Lease", lambda: (
                lambda h: h if h and h != leader else None)(self.lease_holder()), 120)
            self.wait_status("after-handover", "Complete")
            self.assertNotEqual(new_leader, leader)
        finally:
            cluster("install-operator", *OPERATOR_VALUES)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[2:]], verbosity=2)
