"""scripts/cluster.sh as the tests call it (tests/e2e/node_test.py, node_down_test.py and
tests/kuberay-e2e/stage.py): a failure raises with the end of what the script printed."""
import os
import subprocess
import time

NODE_ROOT = os.environ.get("NODE_ROOT", "/var/lib/rayjournal-node")
NODE_RUN = os.environ.get("NODE_RUN", "/run/rayjournal-node")
NODE_IP = os.environ.get("NODE_IP", "172.29.0.1")
SOCKET = os.path.join(NODE_RUN, "containerd.sock")
PKI = os.path.join(NODE_ROOT, "pki")


def cluster(root, *args, check=True):
    """The finished `bash scripts/cluster.sh ARGS...` (stdout and stderr captured)."""
    done = subprocess.run(["bash", os.path.join(root, "scripts/cluster.sh"), *args],
                          capture_output=True, text=True)
    if check and done.returncode:
        raise AssertionError(f"cluster.sh {' '.join(args)}: exit {done.returncode}\n"
                             f"{done.stdout[-1000:]}{done.stderr[-4000:]}")
    return done


def wait_until(what, predicate, timeout, interval=0.5):
    """predicate()'s first truthy answer within timeout seconds, else AssertionError with the last."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout} s (last: {last!r})")


def kubectl(cache, kubeconfig_path, *args, check=True, input=None):
    """The finished `kubectl ARGS...` of the cache's kubectl against the node, as its admin."""
    done = subprocess.run([f"{cache}/bin/kubectl", *args], capture_output=True, text=True,
                          input=input, env={**os.environ, "KUBECONFIG": kubeconfig_path})
    if check and done.returncode:
        raise AssertionError(f"kubectl {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done


def kubeconfig(up):
    """The KUBECONFIG path of `cluster.sh up`'s last line, `export KUBECONFIG=...`."""
    return up.stdout.strip().splitlines()[-1].split("=", 1)[1]


def kube():
    """The tests' REST client (harness.Kube) for the node's API server, as its admin."""
    from harness import Kube
    return Kube(6443, f"{PKI}/ca.crt", f"{PKI}/admin.crt", f"{PKI}/admin.key", host=NODE_IP)


def ctr(*args):
    return subprocess.run(["ctr", "--address", SOCKET, "-n", "k8s.io", *args], check=True,
                          capture_output=True, text=True).stdout


def container_ids(pod):
    """The containerd ids of a Pod's running containers."""
    return [s["containerID"].split("://", 1)[1]
            for s in pod.get("status", {}).get("containerStatuses", [])
            if s.get("containerID") and "running" in s.get("state", {})]


def kill_containers(pod):
    """SIGKILL through the runtime to each of the Pod's running containers: no shutdown code
    runs, as when the kernel's OOM killer or a node fault ends them."""
    for cid in container_ids(pod):
        ctr("tasks", "kill", "-s", "SIGKILL", cid)


def in_pod_netns(pod, argv):
    """argv run on the host in the Pod's network namespace (entered through the pid of one of
    its containers)."""
    cid = container_ids(pod)[0]
    tasks = [line.split() for line in ctr("tasks", "ls").splitlines()[1:]]
    pid = next(int(t[1]) for t in tasks if t[0] == cid)
    subprocess.run(["nsenter", "-t", str(pid), "-n", *argv], check=True, capture_output=True)
