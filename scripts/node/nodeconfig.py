"""The single-node cluster's layout, certificates, configuration files and command lines.

Paths: NODE_ROOT (default /var/lib/rayjournal-node) keeps what may outlive a `down` (etcd's data
is wiped by `down`; containerd's image store and the pki stay, so a second `up` costs seconds);
NODE_RUN (default /run/rayjournal-node) holds sockets, pid files and containerd's state.
"""
import os
import subprocess
import sys

NODE_IP = os.environ.get("NODE_IP", "172.29.0.1")
NODE_LINK = "rjnode0"        # holds NODE_IP: a bridge without ports (no dummy module on these kernels)
POD_BRIDGE = "rjcni0"        # the CNI bridge of the pods
POD_CIDR = "10.246.0.0/24"  # the kubelet stand-in of tests/kuberay-e2e has 10.244.0.0/16
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"     # the `kubernetes` Service
CNI_NETWORK = "rayjournal-node"
# The node's package mirror: wheels (scripts/node/build-images.sh builds them from
# scripts/node/images/mirror-requirements.txt) served on the node's address, where the Ray image's
# pip.conf looks for the packages Ray runtime environments ask for (Pods have no way out).
MIRROR_PORT = 3141
# The sysctls this cluster changes; `down` puts back the values it found.
SYSCTLS = {"net/ipv4/ip_forward": "1", "net/bridge/bridge-nf-call-iptables": "1",
           "net/bridge/bridge-nf-call-ip6tables": "1"}


def sh(argv, check=True):
    done = subprocess.run(argv, capture_output=True, text=True)
    if check and done.returncode:
        raise SystemExit(f"cluster: {' '.join(argv)}: exit {done.returncode}: "
                         f"{(done.stderr or done.stdout).strip()}")
    return done


class Node:
    name = "rayjournal-node"
    ip = NODE_IP
    api_port = 6443
    etcd_port = 12379
    pause_image = "localhost/rayjournal/pause:3.10"
    helper_image = "localhost/rayjournal/node-helper:bookworm"

    def __init__(self, repo):
        self.repo = repo
        self.cache = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(repo, ".cache/control-plane"))
        self.root = os.environ.get("NODE_ROOT", "/var/lib/rayjournal-node")
        self.run = os.environ.get("NODE_RUN", "/run/rayjournal-node")
        self.pki = os.path.join(self.root, "pki")
        self.log_dir = os.path.join(self.root, "logs")
        self.kubelet_dir = os.path.join(self.root, "kubelet")
        self.volumes = os.path.join(self.root, "local-path")
        self.containerd_socket = os.path.join(self.run, "containerd.sock")
        self.containerd_config = os.path.join(self.root, "containerd.toml")
        self.corefile = os.path.join(self.root, "Corefile")
        self.bootstrap_manifest = os.path.join(self.root, "bootstrap.yaml")
        self.admin_kubeconfig = os.path.join(self.root, "admin.kubeconfig")
        self.wheels = os.path.join(repo, ".cache", "node-wheels")

    def bin(self, name):
        return os.path.join(self.cache, "bin", name)

    @staticmethod
    def system_bin(name):
        return os.path.join("/usr/bin", name)

    def pidfile(self, name):
        return os.path.join(self.run, "pids", name + ".pid")

    def logfile(self, name):
        return os.path.join(self.log_dir, name + ".log")

    def image_stamp(self, name):
        return os.path.join(self.root, "images", name.replace("/", "_").replace(":", "@"))

    @staticmethod
    def normalized(name):
        first = name.split("/")[0]
        if "/" not in name:
            name = "docker.io/library/" + name
        elif "." not in first and ":" not in first and first != "localhost":
            name = "docker.io/" + name
        return name if ":" in name.rsplit("/", 1)[1] else name + ":latest"

    @staticmethod
    def component_names():
        return ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "containerd",
                "kubelet", "kube-proxy", "coredns", "local-path-provisioner", "package-mirror"]

    def prepare_host(self):
        for d in (self.root, self.run, self.pki, self.log_dir, self.kubelet_dir, self.volumes,
                  os.path.join(self.run, "pids"), os.path.join(self.root, "images"),
                  os.path.join(self.root, "cni")):
            os.makedirs(d, exist_ok=True)
        if sh(["ip", "link", "show", NODE_LINK], check=False).returncode:
            sh(["ip", "link", "add", NODE_LINK, "type", "bridge"])
        sh(["ip", "addr", "replace", f"{NODE_IP}/32", "dev", NODE_LINK])
        sh(["ip", "link", "set", NODE_LINK, "up"])
        # Traffic to a Service address that kube-proxy did not translate stays on this machine.
        sh(["ip", "route", "replace", SERVICE_CIDR, "dev", NODE_LINK])
        if not os.path.exists("/proc/sys/net/bridge/bridge-nf-call-iptables"):
            sh(["modprobe", "br_netfilter"], check=False)  # absent: Services fail between Pods
        from nodeteardown import save_host_state, write_sysctls
        save_host_state(self)
        write_sysctls(SYSCTLS)

    # --- command lines -------------------------------------------------------------------------

    def etcd_argv(self):
        return [self.bin("etcd"), "--data-dir", os.path.join(self.root, "etcd"), "--name", "node",
                "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                "--listen-peer-urls", "http://127.0.0.1:12380",
                "--initial-advertise-peer-urls", "http://127.0.0.1:12380",
                "--initial-cluster", "node=http://127.0.0.1:12380",
                "--listen-metrics-urls", "http://127.0.0.1:12381", "--unsafe-no-fsync"]

    def apiserver_argv(self):
        p = self.pki
        return [self.bin("kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                f"--bind-address={NODE_IP}", f"--advertise-address={NODE_IP}",
                f"--secure-port={self.api_port}",
                f"--tls-cert-file={p}/apiserver.crt", f"--tls-private-key-file={p}/apiserver.key",
                f"--client-ca-file={p}/ca.crt", "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                f"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={p}/sa.pub",
                f"--service-account-signing-key-file={p}/sa.key",
                f"--kubelet-client-certificate={p}/apiserver-kubelet.crt",
                f"--kubelet-client-key={p}/apiserver-kubelet.key",
                "--kubelet-preferred-address-types=InternalIP", "--allow-privileged=true",
                "--profiling=false", "--event-ttl=30m",
                # Served so that tests can scale requests down in their own namespaces
                # (tests/kuberay-e2e/node-requests-policy.yaml); nothing is bound by default.
                "--feature-gates=MutatingAdmissionPolicy=true",
                "--runtime-config=admissionregistration.k8s.io/v1beta1=true"]

    def controller_manager_argv(self):
        p = self.pki
        return [self.bin("kube-controller-manager"),
                f"--kubeconfig={self.root}/controller-manager.kubeconfig",
                "--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=true",
                f"--service-account-private-key-file={p}/sa.key", f"--root-ca-file={p}/ca.crt",
                f"--cluster-signing-cert-file={p}/ca.crt", f"--cluster-signing-key-file={p}/ca.key",
                f"--flex-volume-plugin-dir={self.root}/flex", f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--kube-api-qps=100", "--kube-api-burst=200"]

    def mirror_argv(self):
        os.makedirs(self.wheels, exist_ok=True)
        return [sys.executable, "-m", "http.server", "--bind", self.ip, "--directory",
                self.wheels, str(MIRROR_PORT)]

    def scheduler_argv(self):
        return [self.bin("kube-scheduler"), f"--kubeconfig={self.root}/scheduler.kubeconfig",
                "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=10259"]

    def kubelet_argv(self):
        return [self.bin("kubelet"), f"--config={self.root}/kubelet.yaml",
                f"--kubeconfig={self.root}/kubelet.kubeconfig",
                f"--container-runtime-endpoint=unix://{self.containerd_socket}",
                f"--node-ip={NODE_IP}", f"--hostname-override={self.name}",
                f"--root-dir={self.kubelet_dir}", f"--cert-dir={self.root}/kubelet-pki", "--v=1"]

    def kube_proxy_argv(self):
        return [self.bin("kube-proxy"), f"--config={self.root}/kube-proxy.yaml"]

    def provisioner_argv(self):
        return [self.bin("local-path-provisioner"), "start",
                f"--kubeconfig={self.admin_kubeconfig}", f"--helper-image={self.helper_image}",
                "--namespace=local-path-storage", "--service-account-name=local-path-provisioner"]


def write_configs(node):
    from nodefiles import (bootstrap_manifest, cni_conflist, containerd_toml, corefile,
                           kube_proxy_yaml, kubelet_yaml)
    from nodepki import make_pki
    make_pki(node)
    files = {node.containerd_config: containerd_toml(node),
             os.path.join(node.root, "cni", "10-rayjournal.conflist"): cni_conflist(),
             os.path.join(node.root, "kubelet.yaml"): kubelet_yaml(node),
             os.path.join(node.root, "kube-proxy.yaml"): kube_proxy_yaml(node),
             node.corefile: corefile(node),
             node.bootstrap_manifest: bootstrap_manifest(node)}
    for path, text in files.items():
        with open(path, "w") as f:
            f.write(text)
