"""e2e tier: the operator image (deploy/Dockerfile, built by scripts/build-image.sh) run with podman
as the Helm chart's StatefulSet runs it, against the real control plane and a real Ray head
(harness.World). Usage: image_test.py IMAGE REPO_ROOT

From the chart rendered by a real helm: the container's args, its env, the UID, the read-only root
filesystem, the dropped capabilities and the journal's mount path; the chart's RBAC is applied and
the operator authenticates as the chart's ServiceAccount (a client certificate stands in for the
in-cluster token, and --ray-dashboard-address for the cluster network: the two flags added here).
The container is killed with `podman kill` while RayJobs run; a new container on the same volume
finishes them with one RayCluster and one Ray submission each, and rayjournal-replay inside the
image reads the journal (`podman exec`, as `kubectl exec` in docs/operations.md)."""

import json
import os
import shutil
import subprocess
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import World, free_port, run, wait_until  # noqa: E402

IMAGE, ROOT = sys.argv[1:3]
CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))
RELEASE_NS = "rayjournal-system"  # the operator-sa certificate's ServiceAccount namespace
# Podman on these machines: runc (crun refuses the hybrid cgroup layout) and limits no higher
# than the shell's (no CAP_SYS_RESOURCE in the sandbox).
PODMAN_FLAGS = ["--runtime", "runc", "--ulimit", "nofile=16384:16384", "--ulimit", "nproc=8192:8192"]
RAY_IMAGE = "rayproject/ray:2.60.0"


def podman(*args, check=True):
    done = subprocess.run(["podman", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done


def ready(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def rayjob(ns, name, mode):
    worker = {"groupName": "small", "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
              "rayStartParams": {},
              "template": {"spec": {"containers": [{"name": "ray-worker", "image": RAY_IMAGE}]}}}
    head = {"rayStartParams": {}, "template": {"spec": {"containers": [{
        "name": "ray-head", "image": RAY_IMAGE,
        "ports": [{"containerPort": 8265, "name": "dashboard"}]}]}}}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": name, "namespace": ns},
            "spec": {"entrypoint": "python -c \"import time; time.sleep(4); print('image-ok')\"",
                     "submissionMode": mode, "shutdownAfterJobFinishes": False,
                     "rayClusterSpec": {"rayVersion": "2.60.0", "headGroupSpec": head,
                                        "workerGroupSpecs": [worker]}}}


class OperatorImage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("podman") is None:
            raise unittest.SkipTest("FAIL: no podman (scripts/build-image.sh installs it)")
        if podman("image", "exists", IMAGE, check=False).returncode != 0:
            raise AssertionError(f"no image {IMAGE}: run scripts/build-image.sh first")
        cls.world = World(CACHE, ROOT, "rjimage-").start()
        cls.cp, cls.kube, cls.ray = cls.world.cp, cls.world.kube, cls.world.ray
        cls.containers = []

    @classmethod
    def tearDownClass(cls):
        for name in getattr(cls, "containers", []):
            podman("rm", "--force", "--time", "0", name, check=False)
        if hasattr(cls, "world"):
            cls.world.stop()

    def render_chart(self, metrics_port):
        """The chart as `helm install -n rayjournal-system` would apply it, as JSON objects."""
        chart = os.path.join(ROOT, "deploy/helm/rayjournal-operator")
        manifest = os.path.join(self.world.work, "chart.yaml")
        rendered = run([os.path.join(CACHE, "bin/helm"), "template", "rj", chart,
                        "--namespace", RELEASE_NS, "--set", f"metrics.port={metrics_port}",
                        "--set", f"image.repository={IMAGE.rsplit(':', 1)[0]}",
                        "--set", f"image.tag={IMAGE.rsplit(':', 1)[1]}"]).stdout
        with open(manifest, "w") as f:
            f.write(rendered)
        text = self.cp.kubectl("create", "--dry-run=client", "-o", "json", "-f", manifest)
        objects, decoder, at = [], json.JSONDecoder(), 0
        while text[at:].strip():  # one JSON document per object, back to back
            obj, end = decoder.raw_decode(text[at:].lstrip())
            objects.append(obj)
            at = len(text) - len(text[at:].lstrip()) + end
        return manifest, objects

    def journal_volume(self):
        volume = os.path.join(self.world.work, "journal-volume")
        os.makedirs(volume)
        os.chown(volume, 65532, 65532)  # what the chart's fsGroup does for the claim
        return volume

    def kube_credentials(self):
        """The operator-sa identity as files UID 65532 can read, mounted read-only."""
        creds = os.path.join(self.world.work, "kube")
        os.makedirs(creds)
        cp_dir = self.cp.dir
        for src, dst in [("operator-sa.kubeconfig", "kubeconfig"), ("ca.crt", "ca.crt"),
                         ("operator-sa.crt", "operator-sa.crt"), ("operator-sa.key", "operator-sa.key")]:
            shutil.copy(os.path.join(cp_dir, src), os.path.join(creds, dst))
            os.chmod(os.path.join(creds, dst), 0o644)
        return creds

    def run_container(self, name, container, volume, creds):
        sc = container["securityContext"]
        mount = container["volumeMounts"][0]["mountPath"]
        flags = ["--user", "65532:65532"]
        if sc.get("readOnlyRootFilesystem"):
            flags.append("--read-only")
        for cap in sc.get("capabilities", {}).get("drop", []):
            flags += ["--cap-drop", cap]
        if sc.get("allowPrivilegeEscalation") is False:
            flags += ["--security-opt", "no-new-privileges"]
        env = []
        for e in container.get("env", []):
            value = e.get("value")
            if value is None and e["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace":
                value = RELEASE_NS
            env += ["--env", f"{e['name']}={value}"]
        args = container["args"] + ["--kubeconfig=/etc/rayjournal-kube/kubeconfig",
                                    f"--ray-dashboard-address={self.ray.address}"]
        podman("run", "--detach", "--name", name, *PODMAN_FLAGS, "--network", "host", *flags,
               *env, "--volume", f"{volume}:{mount}", "--volume", f"{creds}:/etc/rayjournal-kube:ro",
               container["image"], *args)
        self.containers.append(name)
        return mount

    def status(self, ns, name):
        return (self.kube.get("RayJob", ns, name) or {}).get("status", {})

    def test_image_runs_as_the_chart_says_survives_a_kill_and_reads_its_journal(self):
        metrics_port = free_port()
        manifest, objects = self.render_chart(metrics_port)
        self.cp.kubectl("create", "namespace", RELEASE_NS)
        self.cp.kubectl("apply", "--server-side", "-f", manifest)  # RBAC, ServiceAccount, ...
        statefulset = next(o for o in objects if o["kind"] == "StatefulSet")
        pod = statefulset["spec"]["template"]["spec"]
        container = pod["containers"][0]
        self.assertEqual(pod["securityContext"]["runAsUser"], 65532)
        self.assertEqual(container["image"], IMAGE)
        volume, creds = self.journal_volume(), self.kube_credentials()
        mount = self.run_container("rayjournal-0", container, volume, creds)
        # The chart's readiness probe: /readyz on the metrics port, once leader and caches synced.
        wait_until("/readyz 200 from the container", lambda: ready(metrics_port), 90, 0.3)
        ns = "image"
        self.kube.create_namespace(ns)
        names = {"k1": "K8sJobMode", "k2": "K8sJobMode", "h1": "HTTPMode", "h2": "HTTPMode"}
        for name, mode in names.items():
            self.kube.create("RayJob", rayjob(ns, name, mode))
        wait_until("a RayJob Running", lambda: any(
            self.status(ns, n).get("jobDeploymentStatus") == "Running" for n in names), 180, 0.3)
        podman("kill", "--signal", "KILL", "rayjournal-0")
        podman("wait", "rayjournal-0")
        second = "rayjournal-1"
        self.run_container(second, container, volume, creds)
        for name in names:
            wait_until(lambda n=name: f"RayJob {ns}/{n} Complete (now {self.status(ns, n)})",
                       lambda n=name: self.status(ns, n).get("jobDeploymentStatus") == "Complete",
                       240, 0.5)
        for name in names:
            s = self.status(ns, name)
            self.assertEqual(s["jobStatus"], "SUCCEEDED", s)
            self.assertEqual(s.get("failed", 0), 0, f"{name}: an extra attempt after the kill: {s}")
            clusters = self.kube.list("RayCluster", ns, f"ray.io/originated-from-cr-name={name}")
            self.assertEqual(len(clusters), 1, f"{name}: {[c['metadata']['name'] for c in clusters]}")
            submissions = [j for j in self.ray.jobs() if (j.get("submission_id") or "").startswith(name + "-")]
            self.assertEqual([j["submission_id"] for j in submissions], [s["jobId"]], name)
        # rayjournal-replay from inside the image, beside the running operator.
        verify = podman("exec", second, "rayjournal-replay", "--journal", f"{mount}/journal", "verify",
                        check=False)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        summary = json.loads(podman("exec", second, "rayjournal-replay", "--journal", f"{mount}/journal",
                                    "summary", "-o", "json").stdout)
        self.assertTrue(any(r["epoch"] == 2 for r in summary["restarts"]),
                        f"the new container's start is epoch 2: {summary['restarts']}")
        timeline = podman("exec", second, "rayjournal-replay", "--journal", f"{mount}/journal",
                          "timeline", f"{ns}/k1").stdout
        self.assertIn("epoch 2", timeline)
        inspect = json.loads(podman("inspect", second).stdout)[0]
        self.assertTrue(inspect["HostConfig"]["ReadonlyRootfs"])
        self.assertEqual(inspect["Config"]["User"], "65532:65532")
        self.assertEqual(podman("exec", second, "id", "-u").stdout.strip(), "65532")


if __name__ == "__main__":
    started = time.monotonic()
    result = unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[3:], exit=False).result
    print(f"image test: {time.monotonic() - started:.1f}s", file=sys.stderr)
    sys.exit(0 if result.wasSuccessful() and not result.skipped else 1)
