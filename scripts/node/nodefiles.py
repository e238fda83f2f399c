"""The text of the node's configuration files. Each setting that differs from a default says why
(most come from what ../shared/reference/real-node.md measured on these machines, or from kind's
node configuration)."""
import json

from nodeconfig import CNI_NETWORK, NODE_IP, POD_BRIDGE, POD_CIDR


def containerd_toml(node):
    # restrict_oom_score_adj: the sandbox asks for oom_score_adj -998, which these machines refuse
    # without CAP_SYS_RESOURCE (runc: "can't get final child's PID from pipe: EOF"); kind sets it
    # for rootless nodes too. SystemdCgroup = false: no systemd runs as PID 1 here.
    return f"""version = 2
root = "{node.root}/containerd"
state = "{node.run}/containerd"
[grpc]
  address = "{node.containerd_socket}"
[ttrpc]
  address = "{node.containerd_socket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{node.pause_image}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{node.root}/cni"
"""


def cni_conflist():
    # No portmap and no ipMasq: nothing leaves the machine, and the only iptables chains on it
    # are kube-proxy's and the kubelet's (`down` removes those).
    return json.dumps({
        "cniVersion": "0.4.0", "name": CNI_NETWORK,
        "plugins": [
            {"type": "bridge", "bridge": POD_BRIDGE, "isGateway": True, "isDefaultGateway": True,
             "ipMasq": False, "hairpinMode": True,
             "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR}]],
                      "dataDir": "/var/lib/cni/networks"}},
            {"type": "loopback"}]}, indent=2)


def kubelet_yaml(node):
    # cgroupfs: containerd 1.6 lacks CRI RuntimeConfig, so the kubelet cannot ask it. The
    # thresholds at 0%/100% (kind's) never evict or collect the images loaded by hand: no
    # registry is reachable to pull them again. Anonymous + AlwaysAllow on the node address only,
    # so that `kubectl logs/exec` reach the kubelet through the API server.
    return f"""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {NODE_IP}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {{enabled: true}}
  webhook: {{enabled: false}}
  x509: {{clientCAFile: {node.pki}/ca.crt}}
authorization: {{mode: AlwaysAllow}}
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: /
failSwapOn: false
failCgroupV1: false
clusterDNS: [{NODE_IP}]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  nodefs.available: "0%"
  nodefs.inodesFree: "0%"
  imagefs.available: "0%"
podCIDR: {POD_CIDR}
serializeImagePulls: false
registerNode: true
staticPodPath: ""
containerLogMaxSize: 10Mi
podLogsDir: {node.root}/pod-logs
protectKernelDefaults: false
shutdownGracePeriod: 0s
"""


def kube_proxy_yaml(node):
    # conntrack at 0: kube-proxy leaves the host's conntrack sysctls alone (kind's setting).
    return f"""apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {node.root}/kube-proxy.kubeconfig
mode: iptables
clusterCIDR: {POD_CIDR}
hostnameOverride: {node.name}
bindAddress: {NODE_IP}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["{NODE_IP}/32"]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
"""


def corefile(node):
    return f""".:53 {{
    bind {NODE_IP}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {{
        kubeconfig {node.admin_kubeconfig} rayjournal-node
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 10
}}
"""


def bootstrap_manifest(node):
    # The local-path provisioner's namespace, ServiceAccount (its helper Pods run as it) and the
    # ConfigMap it reads its node paths and helper scripts from; the default StorageClass.
    return f"""apiVersion: v1
kind: Namespace
metadata: {{name: local-path-storage}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: local-path-provisioner, namespace: local-path-storage}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: local-path-config, namespace: local-path-storage}}
data:
  config.json: |-
    {{"nodePathMap": [{{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["{node.volumes}"]}}]}}
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "$VOL_DIR"
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata:
      name: helper-pod
    spec:
      containers:
      - name: helper-pod
        image: {node.helper_image}
        imagePullPolicy: Never
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {{storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
"""
