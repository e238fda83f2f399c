#!/usr/bin/env python3
"""A real single-node Kubernetes cluster on this machine (scripts/cluster.sh is the entry point).

    up                 start etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
                       containerd, a kubelet, kube-proxy, CoreDNS and the local-path provisioner;
                       prints `export KUBECONFIG=...` last. A second `up` only checks.
    down               stop all of it and remove what it left: processes, mounts, network
                       namespaces, links, routes, iptables chains, cgroups, changed sysctls.
    load-image NAME..  copy podman images into the node's containerd (only those that changed).
    alias-image SOURCE ALIAS..
                       name an image the node holds under other names too (KubeRay's samples ask
                       for images no registry here serves; docs/compatibility.md lists them).
    status             each component's process and the node's readiness.
    leftovers          what `down` must have removed and is still there (exit 1 if anything).

Everything listens on loopback or on the node address (a dummy link of its own, NODE_IP); the
pods' bridge and the Service range route nowhere off the machine. Binaries come from
scripts/build-control-plane.sh (.cache/control-plane/bin), images from podman (scripts/node/).
The layout and the settings this host needs are in docs/real-node.md.
"""
import json
import os
import signal
import subprocess
import sys
import time

from nodeconfig import Node, write_configs
from nodeteardown import leftovers, teardown

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(message):
    print(f"cluster: {message}", file=sys.stderr, flush=True)


def wait_until(what, predicate, timeout, interval=0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise SystemExit(f"cluster: {what} not reached within {timeout} s")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


class Components:
    """The cluster's host processes: one pid file and one log each, started detached."""

    def __init__(self, node):
        self.node = node

    def pid(self, name):
        try:
            with open(self.node.pidfile(name)) as f:
                pid = int(f.read())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def start(self, name, argv, env=None):
        if self.pid(name):
            return False
        logfile = open(self.node.logfile(name), "ab")
        proc = subprocess.Popen(argv, stdout=logfile, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, **(env or {})}, cwd=self.node.root)
        with open(self.node.pidfile(name), "w") as f:
            f.write(str(proc.pid))
        log(f"started {name} (pid {proc.pid}, log {self.node.logfile(name)})")
        return True

    def check_running(self, name):
        if not self.pid(name):
            tail = subprocess.run(["tail", "-n", "25", self.node.logfile(name)],
                                  capture_output=True, text=True).stdout
            raise SystemExit(f"cluster: {name} exited; the end of its log:\n{tail}")


def run(argv, **kwargs):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs).stdout


def kubectl(node, *args, check=True, input=None):
    done = subprocess.run([node.bin("kubectl"), f"--kubeconfig={node.admin_kubeconfig}", *args],
                          capture_output=True, text=True, input=input)
    if check and done.returncode:
        raise SystemExit(f"cluster: kubectl {' '.join(args)}: {done.stderr.strip()}")
    return done


def api_ready(node):
    return kubectl(node, "get", "--raw=/readyz", check=False).stdout.strip() == "ok"


def node_ready(node):
    out = kubectl(node, "get", "node", node.name, "-o",
                  "jsonpath={.status.conditions[?(@.type=='Ready')].status}", check=False)
    return out.stdout.strip() == "True"


def start_control_plane(node, procs):
    procs.start("etcd", node.etcd_argv())
    procs.start("kube-apiserver", node.apiserver_argv())
    wait_until("kube-apiserver /readyz", lambda: api_ready(node) or procs.check_running(
        "kube-apiserver"), 120)
    procs.start("kube-controller-manager", node.controller_manager_argv())
    procs.start("kube-scheduler", node.scheduler_argv())


def start_node(node, procs):
    procs.start("containerd", [node.system_bin("containerd"), "--config", node.containerd_config])
    wait_until("containerd's socket", lambda: os.path.exists(node.containerd_socket) or
               procs.check_running("containerd"), 30)
    load_images(node, [node.pause_image, node.helper_image], build_missing=True)
    procs.start("kubelet", node.kubelet_argv())
    procs.start("kube-proxy", node.kube_proxy_argv())
    wait_until(f"node {node.name} Ready", lambda: node_ready(node) or procs.check_running(
        "kubelet"), 120)


def start_services(node, procs):
    kubectl(node, "apply", "--server-side", "--force-conflicts", "-f", node.bootstrap_manifest)
    procs.start("coredns", [node.bin("coredns"), "-conf", node.corefile])
    procs.start("local-path-provisioner", node.provisioner_argv())
    procs.start("package-mirror", node.mirror_argv())
    wait_until("CoreDNS answering for kubernetes.default", lambda: dns_answers(node) or
               procs.check_running("coredns"), 60)
    wait_until("the default ServiceAccount", lambda: kubectl(
        node, "-n", "default", "get", "serviceaccount", "default", check=False).returncode == 0,
        60)


def dns_answers(node):
    import socket
    query = (b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" +
             b"".join(bytes([len(p)]) + p.encode() for p in
                      "kubernetes.default.svc.cluster.local".split(".")) + b"\x00\x00\x01\x00\x01")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        try:
            s.sendto(query, (node.ip, 53))
            answer = s.recv(512)
        except OSError:
            return False
    return len(answer) > 12 and answer[3] & 0x0F == 0 and int.from_bytes(answer[6:8], "big") > 0


def up(node):
    started = time.monotonic()
    node.prepare_host()
    write_configs(node)
    procs = Components(node)
    start_control_plane(node, procs)
    start_node(node, procs)
    start_services(node, procs)
    log(f"ready in {time.monotonic() - started:.1f} s: node {node.name} at {node.ip}, "
        f"API server https://{node.ip}:{node.api_port}, logs in {node.log_dir}")
    print(f"export KUBECONFIG={node.admin_kubeconfig}")


def images_in_containerd(node):
    out = run([node.system_bin("ctr"), "--address", node.containerd_socket, "-n", "k8s.io",
               "images", "ls", "-q"])
    return set(out.split())


def podman_id(name):
    done = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", name],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def load_images(node, names, build_missing=False):
    """Imports each podman image into containerd under its normalized name, unless the same
    image id was imported before and containerd still holds it."""
    present = images_in_containerd(node)
    for name in names:
        if build_missing and not podman_id(name):
            subprocess.run(["bash", os.path.join(REPO, "scripts/node/build-images.sh"),
                            name], check=True)
        image_id = podman_id(name)
        if not image_id:
            raise SystemExit(f"cluster: podman has no image {name} "
                             "(bash scripts/node/build-images.sh builds the node's images)")
        stamp = node.image_stamp(name)
        try:
            with open(stamp) as f:
                if f.read() == image_id and node.normalized(name) in present:
                    continue
        except OSError:
            pass
        started = time.monotonic()
        archive = os.path.join(node.root, "image.tar")
        run(["podman", "save", "--quiet", "--format", "docker-archive", "-o", archive, name])
        run([node.system_bin("ctr"), "--address", node.containerd_socket, "-n", "k8s.io",
             "images", "import", "--no-unpack", archive])
        os.unlink(archive)
        with open(stamp, "w") as f:
            f.write(image_id)
        log(f"loaded {name} into the node in {time.monotonic() - started:.1f} s")


def alias_images(node, source, aliases):
    """containerd tags: the alias and the source share one image, so a Pod asking for the alias
    with IfNotPresent runs the source."""
    present = images_in_containerd(node)
    if node.normalized(source) not in present:
        raise SystemExit(f"cluster: the node holds no image {source} (cluster.sh images loads it)")
    for alias in aliases:
        if node.normalized(alias) == node.normalized(source):
            continue
        run([node.system_bin("ctr"), "--address", node.containerd_socket, "-n", "k8s.io",
             "images", "tag", "--force", node.normalized(source), node.normalized(alias)])
        log(f"{alias} names {source} on the node")


def status(node):
    procs = Components(node)
    report = {name: procs.pid(name) for name in node.component_names()}
    report["nodeReady"] = bool(report.get("kube-apiserver")) and node_ready(node)
    print(json.dumps(report, indent=2))
    return 0 if all(report.values()) else 1


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    node = Node(REPO)
    command = argv[1]
    if command == "up":
        up(node)
    elif command == "down":
        teardown(node, Components(node), log)
    elif command == "load-image":
        load_images(node, argv[2:])
    elif command == "alias-image" and len(argv) >= 4:
        alias_images(node, argv[2], argv[3:])
    elif command == "status":
        return status(node)
    elif command == "leftovers":
        found = leftovers(node)
        for line in found:
            print(line)
        return 1 if found else 0
    else:
        print(f"cluster: unknown command {command!r}\n{__doc__}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main(sys.argv))
