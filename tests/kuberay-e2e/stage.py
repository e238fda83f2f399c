"""The stage both KubeRay-suite runners stand on: the e2e control plane with the RayJob and
RayCluster CRDs, the kubelet stand-in (standin.py) and one operator under test, rayjournal or
KubeRay's, which can be killed with SIGKILL and started again on the same journal.

The operator runs in a mount namespace of its own whose /etc/resolv.conf names the stand-in's
DNS, as in-cluster DNS would be, so KubeRay reaches a head by its Service's name."""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import nodeclient  # noqa: E402
from harness import ControlPlane, Process, crd_dir, wait_until  # noqa: E402
from standin import GATEWAY, Kubelet  # noqa: E402

CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache", "control-plane"))
KUBERAY_VERSION = os.environ.get("KUBERAY_VERSION", "v1.6.2")
OPERATORS = ("rayjournal", "kuberay")
# Images KubeRay's suites name, built here (scripts/node/build-images.sh) and loaded into the node.
NODE_IMAGES = ("docker.io/rayproject/ray:2.60.0", "docker.io/library/redis:7.4",
               "docker.io/rancher/curl:latest", "docker.io/kuberay/submitter:nightly")
# The gates KubeRay's e2e overlay (config/overlays/test-overrides) turns on that rayjournal acts
# on, as the chart's featureGates list (SidecarSubmitterRestart needs Kubernetes 1.35; the node
# runs 1.34).
RAYJOURNAL_GATES = [arg for i, (gate, on) in enumerate((
    ("RayClusterStatusConditions", "true"), ("RayJobDeletionPolicy", "true"),
    ("GCSFaultToleranceEmbeddedStorage", "true")))
    for arg in ("--set", f"featureGates[{i}].name={gate}", "--set", f"featureGates[{i}].enabled={on}")]


def operator_command(operator, kubeconfig, work, rayjournal_binary=None):
    if operator == "kuberay":
        return [os.path.join(CACHE, "bin", f"kuberay-operator-{KUBERAY_VERSION}"),
                f"--kubeconfig={kubeconfig}"]
    binary = rayjournal_binary or os.path.join(ROOT, "build", "bin", "rayjournal-operator")
    return [binary, f"--kubeconfig={kubeconfig}", f"--journal-dir={work}/journal",
            "--metrics-bind-address=0", "--log-level=info"]


def with_cluster_dns(cmd, work):
    """The command in a mount namespace whose /etc/resolv.conf names the stand-in's DNS."""
    resolv = os.path.join(work, "operator-resolv.conf")
    with open(resolv, "w") as f:
        f.write(f"nameserver {GATEWAY}\nsearch svc.cluster.local cluster.local\noptions ndots:5\n")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolv, *cmd]


class Stage:
    """Control plane, stand-in and operator in `work`; start() then stop() (always)."""

    def __init__(self, operator, work, rayjournal_binary=None):
        self.operator, self.work, self.binary = operator, work, rayjournal_binary
        self.cp = ControlPlane(CACHE, os.path.join(work, "cp"))
        self.kubelet = self.op = None
        self.operator_starts = 0

    def start(self):
        self.cp.start()
        self.cp.kubectl("apply", "--server-side", "-f",
                        crd_dir(self.operator, ROOT, KUBERAY_VERSION))
        wait_until("CRDs served", lambda: self.cp.kube.list("RayJob") is not None, 60, 0.5)
        self.kubelet = Kubelet(self.cp.kube, os.path.join(CACHE, "ray-venv"), self.work).start()
        return self.start_operator()

    def start_operator(self, proxy=None):
        """Starts the operator (again, on the same journal), talking to the API server or to a
        fault proxy (faultproxy.py) in front of it; its log gains each run's output."""
        self.operator_starts += 1
        kubeconfig = self.cp.kubeconfig
        if proxy:
            kubeconfig = os.path.join(self.cp.dir, "via-proxy.kubeconfig")
            with open(self.cp.kubeconfig) as f, open(kubeconfig, "w") as out:
                out.write(f.read().replace(f"https://127.0.0.1:{self.cp.api_port}",
                                           f"https://127.0.0.1:{proxy.address[1]}"))
        cmd = operator_command(self.operator, kubeconfig, self.work, self.binary)
        self.op = Process("operator", with_cluster_dns(cmd, self.work), self.work).start()
        return self

    def stop_operator(self):
        self.op.stop()

    def kill_operator(self):
        """SIGKILL to the operator's process group: no shutdown code runs."""
        self.op.kill9()

    def operator_trouble(self):
        """Why the operator is not running, unless a kill -9 of a case's own ended it."""
        if self.op.alive() or self.op.proc.returncode == -9:
            return None
        return (f"the operator exited by itself (code {self.op.proc.returncode}) during the "
                f"case; see {self.work}/operator.log")

    def proxy_ends(self):
        d = self.cp.dir
        return {"listen": "127.0.0.1", "server_cert": f"{d}/server.crt",
                "server_key": f"{d}/server.key", "upstream": ("127.0.0.1", self.cp.api_port),
                "ca": f"{d}/ca.crt", "admin_cert": f"{d}/admin.crt", "admin_key": f"{d}/admin.key"}

    def share_with_pods(self, host_dir):
        """host_dir as the Pods' containers see it: the stand-in runs them as host processes."""
        if host_dir not in self.kubelet.keep:
            self.kubelet.keep.append(host_dir)
        return {}

    def stop(self):
        if self.op:
            self.op.stop()
        if self.kubelet:
            self.kubelet.stop()
        self.cp.stop()


def head_commit():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def report(meta, rows, table, json_path=None, markdown_path=None):
    """Writes {summary, cases} to json_path and the table to markdown_path (when given), and
    prints the table."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"summary": meta, "cases": rows}, f, indent=1)
    if markdown_path:
        with open(markdown_path, "w") as f:
            f.write(table)
    print(table)


class NodeOperator:
    """The operator deployed in the real node, seen as run.py sees a local one: its log (the
    Pods' logs, kept in the work directory at stop()) and whether it runs."""

    def __init__(self, stage):
        self.stage, self.proc = stage, None
        self.log_path = os.path.join(stage.work, "operator.log")
        self.saved = {}  # (Pod uid, "--previous" or None) -> its log

    def pods(self):
        done = self.stage.kubectl("get", "pods", "-A", "-l", self.stage.selector, "-o", "json",
                                  check=False)
        return json.loads(done.stdout)["items"] if done.returncode == 0 else []

    def alive(self):
        return any(p.get("status", {}).get("phase") == "Running" for p in self.pods())

    def save_log(self):
        """The logs of the operator's Pods (each container's current and previous run), with
        those of Pods saved before and gone since (a weak-spot case deletes them)."""
        for pod in self.pods():
            meta = pod["metadata"]
            for previous in ("--previous", None):
                done = self.stage.kubectl("-n", meta["namespace"], "logs", meta["name"],
                                          *([previous] if previous else []), check=False)
                if done.returncode == 0:
                    self.saved[(meta["uid"], previous)] = \
                        f"--- {meta['name']} {previous or ''}\n{done.stdout}"
        with open(self.log_path, "w") as f:
            f.write("".join(self.saved.values()))

    def log(self):
        if not os.path.exists(self.log_path):
            self.save_log()
        with open(self.log_path) as f:
            return f.read()


class NodeStage:
    """The real node (scripts/cluster.sh) with the operator under test deployed in it as its
    users deploy it: rayjournal by its Helm chart (cluster.sh install-operator), KubeRay's from
    its own kustomize manifests (ray-operator/config/default) with an image of its operator built
    here. The cluster stays up at stop() (the e2e tier's e2e.node_down takes it down)."""

    def __init__(self, operator, work):
        self.operator, self.work = operator, work
        self.kubelet, self.operator_starts = None, 1
        self.selector = ("app.kubernetes.io/name=rayjournal-operator" if operator == "rayjournal"
                         else "app.kubernetes.io/name=kuberay")
        self.op = NodeOperator(self)
        self.cp = None

    def cluster(self, *args):
        return nodeclient.cluster(ROOT, *args)

    def kubectl(self, *args, check=True, input=None):
        done = subprocess.run([os.path.join(CACHE, "bin", "kubectl"),
                               f"--kubeconfig={self.cp.kubeconfig}", *args],
                              capture_output=True, text=True, input=input)
        if check and done.returncode:
            raise RuntimeError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
        return done

    def start(self):
        kubeconfig = nodeclient.kubeconfig(self.cluster("up"))
        self.cp = type("NodeControlPlane", (), {"kubeconfig": kubeconfig,
                                                "kube": nodeclient.kube()})()
        self.cluster("images", *NODE_IMAGES)
        self.alias_sample_images()
        self.apply_requests_policy()
        if self.operator == "rayjournal":
            self.uninstall_kuberay()
            self.cluster("install-operator", "--set", "logging.format=text", *RAYJOURNAL_GATES)
        else:
            self.install_kuberay()
        return self

    def alias_sample_images(self):
        """KubeRay's samples (config/samples, applied unchanged by sampleyaml) name Ray and Redis
        images of other versions; no registry serves them here, so those names are given to the
        images built here (docs/compatibility.md says so)."""
        samples = os.path.normpath(os.path.join(self.kuberay_config(), "..", "samples"))
        named = set()
        for name in [n for n in os.listdir(samples) if n.endswith(".yaml")]:
            with open(os.path.join(samples, name)) as f:
                named.update(re.findall(r"image:\s*[\"']?((?:rayproject/ray|redis):[\w.-]+)", f.read()))
        for source, prefix in (("docker.io/rayproject/ray:2.60.0", "rayproject/ray:"),
                               ("docker.io/library/redis:7.4", "redis:")):
            aliases = sorted(n for n in named if n.startswith(prefix))
            if aliases:
                self.cluster("alias-image", source, *aliases)

    def apply_requests_policy(self):
        """node-requests-policy.yaml, and a wait until the API server applies it (it reloads
        policies every few seconds): a Pod created in a test namespace before then would ask the
        scheduler for its full request."""
        self.kubectl("apply", "--server-side", "-f", os.path.join(HERE, "node-requests-policy.yaml"))
        probe_ns = "test-ns-requests-policy-probe"
        self.kubectl("create", "namespace", probe_ns, check=False)
        pod = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
                          "spec": {"containers": [{"name": "c", "image": "probe", "resources": {
                              "requests": {"cpu": "1"}}}]}})

        def scaled():
            done = self.kubectl("create", "--dry-run=server", "-n", probe_ns, "-f", "-", "-o",
                                "jsonpath={.spec.containers[0].resources.requests.cpu}",
                                input=pod, check=False)
            return done.stdout.strip() == "100m"
        wait_until("the API server scales CPU requests in test namespaces", scaled, 60, 1)

    # --- what weakspots.py does to the operator ---------------------------------------------

    WORKLOADS = {"rayjournal": ("rayjournal-system", "statefulset/rayjournal-operator"),
                 "kuberay": ("default", "deployment/kuberay-operator")}

    def scale_operator(self, replicas):
        ns, workload = self.WORKLOADS[self.operator]
        self.kubectl("-n", ns, "scale", workload, f"--replicas={replicas}")

    def wait_operator_gone(self):
        wait_until("the operator's Pods gone", lambda: not self.op.pods(), 120, 0.5)

    def stop_operator(self):
        """No replicas: its Pod deleted gracefully, as `kubectl scale` does."""
        self.op.save_log()
        self.scale_operator(0)
        self.wait_operator_gone()

    def kill_operator(self):
        """SIGKILL through the runtime, then no replicas, so that it stays down until
        start_operator(): the kubelet sees a dead container at its next relist (each second),
        and by then the Pod is terminating, which it does not restart."""
        self.op.save_log()
        pods = self.op.pods()
        for pod in pods:
            nodeclient.kill_containers(pod)
        self.scale_operator(0)
        self.wait_operator_gone()

    def start_operator(self, proxy=None):
        """One replica again (rayjournal's on the same claim), finding the API server as
        in-cluster clients do (KUBERNETES_SERVICE_HOST/PORT): the Service, or a fault proxy on
        the node's address."""
        ns, workload = self.WORKLOADS[self.operator]
        env = ([f"KUBERNETES_SERVICE_HOST={proxy.address[0]}",
                f"KUBERNETES_SERVICE_PORT={proxy.address[1]}"] if proxy
               else ["KUBERNETES_SERVICE_HOST-", "KUBERNETES_SERVICE_PORT-"])
        self.kubectl("-n", ns, "set", "env", workload, *env)
        self.scale_operator(1)
        self.operator_starts += 1
        wait_until("the operator Ready", lambda: any(
            c["type"] == "Ready" and c["status"] == "True" and not p["metadata"].get(
                "deletionTimestamp")
            for p in self.op.pods() for c in p.get("status", {}).get("conditions", [])), 240, 0.5)
        return self

    def operator_trouble(self):
        """Restarts the kubelet made of the operator's container (our kills leave none: they
        scale it to no replicas), or a missing operator."""
        pods = self.op.pods()
        restarts = sum(c.get("restartCount", 0) for p in pods
                       for c in p.get("status", {}).get("containerStatuses", []))
        if restarts:
            return (f"the operator's container exited by itself and was restarted {restarts} "
                    f"time(s) during the case; see {self.work}/operator.log")
        return None if self.op.alive() else "the operator is not running"

    def proxy_ends(self):
        pki = nodeclient.PKI
        return {"listen": nodeclient.NODE_IP, "server_cert": f"{pki}/apiserver.crt",
                "server_key": f"{pki}/apiserver.key", "upstream": (nodeclient.NODE_IP, 6443),
                "ca": f"{pki}/ca.crt", "admin_cert": f"{pki}/admin.crt",
                "admin_key": f"{pki}/admin.key"}

    def share_with_pods(self, host_dir):
        """host_dir as the Pods' containers see it: a hostPath volume at the same path."""
        return {"volumes": [{"name": "shared", "hostPath": {"path": host_dir,
                                                            "type": "Directory"}}],
                "volumeMounts": [{"name": "shared", "mountPath": host_dir}]}

    def kuberay_config(self):
        return os.path.normpath(os.path.join(crd_dir("kuberay", ROOT, KUBERAY_VERSION),
                                             "..", "..", "default"))  # crd/bases -> default

    def uninstall_kuberay(self):
        """KubeRay's Deployment, RBAC and CRDs (and so every RayJob and RayCluster) gone, so
        that rayjournal's chart installs its own CRDs. Only when KubeRay is installed: the CRDs
        have the same names as the chart's, which `helm upgrade` of an installed release does
        not put back."""
        if self.kubectl("-n", "default", "get", "deployment", "kuberay-operator",
                        check=False).returncode:
            return
        # The operator that would remove their finalizers (a RayJob's, a GCS fault-tolerant
        # RayCluster's Redis cleanup) goes in the same delete: the CRDs' deletion would wait for
        # those objects for ever.
        for kind, plural in (("RayJob", "rayjobs"), ("RayCluster", "rayclusters")):
            for obj in self.cp.kube.list(kind):
                if obj["metadata"].get("finalizers"):
                    self.kubectl("-n", obj["metadata"]["namespace"], "patch", plural,
                                 obj["metadata"]["name"], "--type=merge",
                                 "-p", '{"metadata":{"finalizers":null}}', check=False)
        self.kubectl("delete", "--ignore-not-found", "--wait=true", "-k", self.kuberay_config(),
                     check=False)

    def install_kuberay(self):
        """KubeRay's operator as its own kustomize manifests deploy it (config/default: CRDs,
        RBAC, a Deployment in `default`), after rayjournal's release is uninstalled."""
        image = f"quay.io/kuberay/operator:{KUBERAY_VERSION}"
        self.cluster("images", image)
        subprocess.run([os.path.join(CACHE, "bin", "helm"), "uninstall", "rayjournal",
                        "--namespace", "rayjournal-system", "--wait",
                        f"--kubeconfig={self.cp.kubeconfig}"], capture_output=True)
        self.kubectl("apply", "--server-side", "--force-conflicts", "-k", self.kuberay_config())
        self.kubectl("-n", "default", "rollout", "status", "deployment/kuberay-operator",
                     "--timeout=180s")

    def stop(self):
        if self.cp:
            self.op.save_log()
            if self.operator == "kuberay":
                self.uninstall_kuberay()
