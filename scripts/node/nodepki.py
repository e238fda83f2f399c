"""The cluster's certificates (openssl) and the kubeconfig of each client.

One CA signs everything. The API server's serving certificate names the node address, loopback,
the `kubernetes` Service address and its DNS names, so that Pods reach it through the Service.
Each component authenticates with a client certificate whose subject is the user the API
server's bootstrap RBAC already grants (system:kube-scheduler, system:node:<name>, ...).
Made once; a later `up` reuses them.
"""
import os
import subprocess

from nodeconfig import NODE_IP, SERVICE_IP

CLIENTS = {
    "admin": "/CN=rayjournal-node-admin/O=system:masters",
    "controller-manager": "/CN=system:kube-controller-manager",
    "scheduler": "/CN=system:kube-scheduler",
    "kube-proxy": "/CN=system:kube-proxy",
    "apiserver-kubelet": "/CN=kube-apiserver-kubelet-client/O=system:masters",
}


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def sign(pki, name, subject, extensions):
    key, csr, ext = (f"{pki}/{name}.{s}" for s in ("key", "csr", "ext"))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", subject)
    with open(ext, "w") as f:
        f.write(extensions)
    openssl("x509", "-req", "-in", csr, "-CA", f"{pki}/ca.crt", "-CAkey", f"{pki}/ca.key",
            "-CAcreateserial", "-days", "365", "-out", f"{pki}/{name}.crt", "-extfile", ext)
    os.unlink(csr)
    os.unlink(ext)


def make_pki(node):
    pki = node.pki
    if not os.path.exists(f"{pki}/apiserver.crt"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365", "-keyout",
                f"{pki}/ca.key", "-out", f"{pki}/ca.crt", "-subj", "/CN=rayjournal-node-ca")
        names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 "kubernetes.default.svc.cluster.local", "localhost"]
        sans = ",".join([f"IP:{NODE_IP}", f"IP:{SERVICE_IP}", "IP:127.0.0.1"] +
                        [f"DNS:{n}" for n in names])
        sign(pki, "apiserver", "/CN=kube-apiserver",
             f"subjectAltName={sans}\nextendedKeyUsage=serverAuth\n")
        sign(pki, "kubelet", f"/CN=system:node:{node.name}/O=system:nodes",
             "extendedKeyUsage=clientAuth\n")
        for name, subject in CLIENTS.items():
            sign(pki, name, subject, "extendedKeyUsage=clientAuth\n")
        openssl("genrsa", "-out", f"{pki}/sa.key", "2048")
        openssl("rsa", "-in", f"{pki}/sa.key", "-pubout", "-out", f"{pki}/sa.pub")
    for name in ["admin", "controller-manager", "scheduler", "kube-proxy", "kubelet"]:
        write_kubeconfig(node, name)


def write_kubeconfig(node, name):
    pki = node.pki
    with open(os.path.join(node.root, f"{name}.kubeconfig"), "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: rayjournal-node
  cluster:
    server: https://{NODE_IP}:{node.api_port}
    certificate-authority: {pki}/ca.crt
users:
- name: {name}
  user:
    client-certificate: {pki}/{name}.crt
    client-key: {pki}/{name}.key
contexts:
- name: rayjournal-node
  context: {{cluster: rayjournal-node, user: {name}, namespace: default}}
current-context: rayjournal-node
""")
