"""The e2e tier's real components on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager
(built by scripts/build-control-plane.sh), a real Ray head from the PyPI virtualenv, a fake
kubelet, and the operator under test. Everything binds loopback on free ports and is torn down
by stop(), whatever happened. Standard library only."""

import http.client
import http.server
import json
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request


# Ports for the servers tests start come from below the kernel's ephemeral range (32768 up on
# Debian), never from bind(0): a port bind(0) found free is free only until the next outgoing
# connection or the next bind(0) of Ray's own components takes it, and `ray start` exits at once
# when its dashboard port is taken (one CI run waited 180 s on such a head). Ray keeps its own
# fixed ports (6379, 8265, 10001) and its default worker ports (10002-19999) to itself, so
# servers take 20000-29999, and the shared head's workers 30000-32699, a block of 100 per test
# process.
_SERVER_PORTS = (20000, 30000)
_handed_out = set()
_ports_lock = threading.Lock()


def free_port():
    """A loopback TCP port nothing listens on now and that this process has not handed out."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    with _ports_lock:
        for _ in range(1000):
            port = rng.randrange(*_SERVER_PORTS)
            if port in _handed_out:
                continue
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free loopback port in {_SERVER_PORTS[0]}-{_SERVER_PORTS[1] - 1}")


def ray_worker_ports():
    """This process's block of 100 ports for Ray workers, outside the ephemeral range too."""
    base = 30000 + (os.getpid() % 27) * 100
    return base, base + 99


class StopWaiting(Exception):
    """Raised by a wait_until predicate when what it waits for can no longer happen."""


def wait_until(what, predicate, timeout, interval=0.2):
    """Polls predicate until it returns a truthy value; raises with `what` on timeout. `what`
    may be a callable: it is asked at the timeout, so a message can show the state then rather
    than the state when the wait began."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except StopWaiting:
            raise
        except Exception as e:  # noqa: BLE001 - kept for the timeout message
            last_error = e
        time.sleep(interval)
    if callable(what):
        what = what()
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}" +
                       (f" (last error: {last_error})" if last_error else ""))


def crd_dir(operator, root, kuberay_version):
    """The CRDs to install for an operator under test: KubeRay's own for KubeRay's operator (its
    manager waits for every kind it watches, RayService among them, and exits after two minutes
    when one is not served), else rayjournal's deploy/crds. KUBERAY_CRDS overrides KubeRay's."""
    if operator != "kuberay":
        return os.path.join(root, "deploy", "crds")
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True,
                              check=True).stdout.strip()  # where build.sh's go get put KubeRay
    bases = os.path.join(modcache, "github.com/ray-project/kuberay",
                         f"ray-operator@{kuberay_version}", "config/crd/bases")
    return os.environ.get("KUBERAY_CRDS", bases)


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


class ApiError(Exception):
    def __init__(self, status, body):
        super().__init__(f"{status}: {body[:300]}")
        self.status = status


class Kube:
    """A minimal Kubernetes REST client for the tests (client-certificate auth)."""

    PATHS = {
        "RayJob": ("/apis/ray.io/v1", "rayjobs"),
        "RayCluster": ("/apis/ray.io/v1", "rayclusters"),
        "Job": ("/apis/batch/v1", "jobs"),
        "Deployment": ("/apis/apps/v1", "deployments"),
        "Pod": ("/api/v1", "pods"),
        "Service": ("/api/v1", "services"),
        "Namespace": ("/api/v1", "namespaces"),
        "Event": ("/apis/events.k8s.io/v1", "events"),
        "Lease": ("/apis/coordination.k8s.io/v1", "leases"),
        "ServiceAccount": ("/api/v1", "serviceaccounts"),
        "Role": ("/apis/rbac.authorization.k8s.io/v1", "roles"),
        "RoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "rolebindings"),
        "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims"),
    }

    def __init__(self, port, ca, cert, key, host="127.0.0.1"):
        self.port, self.host = port, host
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.local = threading.local()

    def path(self, kind, ns=None, name=None, sub=None, query=None):
        prefix, plural = self.PATHS[kind]
        p = prefix + (f"/namespaces/{ns}" if ns and kind != "Namespace" else "") + "/" + plural
        if name:
            p += "/" + name
        if sub:
            p += "/" + sub
        if query:
            p += "?" + urllib.parse.urlencode(query)
        return p

    def request(self, method, path, body=None, content_type="application/json", raw=False):
        for attempt in range(2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                   timeout=30)
                self.local.conn = conn
            try:
                headers = {"Accept": "application/json"}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = content_type
                conn.request(method, path, body=data, headers=headers)
                res = conn.getresponse()
                text = res.read().decode()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 1:
                    raise
                continue
            if res.status >= 300:
                raise ApiError(res.status, text)
            if raw:
                return text
            return json.loads(text) if text else {}

    def get(self, kind, ns, name):
        try:
            return self.request("GET", self.path(kind, ns, name))
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    def list(self, kind, ns=None, selector=None):
        q = {"labelSelector": selector} if selector else None
        return self.request("GET", self.path(kind, ns, query=q))["items"]

    def create(self, kind, obj):
        return self.request("POST", self.path(kind, obj["metadata"].get("namespace")), obj)

    def patch(self, kind, ns, name, patch, sub=None):
        return self.request("PATCH", self.path(kind, ns, name, sub), patch,
                            "application/merge-patch+json")

    def update_status(self, kind, obj):
        m = obj["metadata"]
        return self.request("PUT", self.path(kind, m["namespace"], m["name"], "status"), obj)

    def delete(self, kind, ns, name, grace=None):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        try:
            return self.request("DELETE", self.path(kind, ns, name), body)
        except ApiError as e:
            if e.status != 404:
                raise

    def create_namespace(self, name):
        self.create("Namespace", {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": name}})


class Process:
    """A child process in its own process group, its output in a log file."""

    def __init__(self, name, cmd, log_dir, env=None):
        self.name = name
        self.cmd = cmd
        self.log_path = os.path.join(log_dir, name + ".log")
        self.env = env
        self.proc = None

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT,
                                     env=self.env, start_new_session=True)
        log.close()
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self, timeout=20):
        if not self.alive():
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def crash_report(log_text, max_frames=30):
    """The stack a crashed operator printed (src/adapters/CrashReport.h), its frames in our
    binaries named with addr2line: what a CI log needs when the process and its core are gone."""
    at = log_text.rfind("rayjournal: fatal signal")
    if at < 0:
        return []
    lines = log_text[at:].splitlines()
    out = [lines[0]]
    for frame in lines[1:max_frames + 1]:
        m = re.match(r"(/\S+)\((?:[^)+]*)\+(0x[0-9a-f]+)\)", frame)
        if not m:
            continue
        name = frame
        if "rayjournal" in os.path.basename(m.group(1)):
            try:
                r = subprocess.run(["addr2line", "-Cfpe", m.group(1), m.group(2)],
                                   capture_output=True, text=True, timeout=20)
                name = r.stdout.strip() or frame
            except (OSError, subprocess.TimeoutExpired):
                pass
        out.append("  " + name)
    return out


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager on 127.0.0.1."""

    def __init__(self, cache, workdir):
        self.bin = os.path.join(cache, "bin")
        self.dir = workdir
        self.procs = {}
        self.apiserver_flags = []  # more kube-apiserver flags (the benchmark's audit log)
        self.etcd_port, self.peer_port, self.api_port = free_port(), free_port(), free_port()

    def certs(self):
        d = self.dir
        run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt", "-subj", "/CN=rayjournal-e2e-ca"])

        def sign(name, subj, ext):
            run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{d}/{name}.key",
                 "-out", f"{d}/{name}.csr", "-subj", subj])
            with open(f"{d}/{name}.ext", "w") as f:
                f.write(ext)
            run(["openssl", "x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.crt",
                 "-CAkey", f"{d}/ca.key", "-CAcreateserial", "-days", "2",
                 "-out", f"{d}/{name}.crt", "-extfile", f"{d}/{name}.ext"])

        sign("server", "/CN=kube-apiserver",
             "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
        sign("admin", "/CN=admin/O=system:masters", "extendedKeyUsage=clientAuth\n")
        # The operator's ServiceAccount identity: only the RBAC of deploy/ applies to it.
        sign("operator-sa", "/CN=system:serviceaccount:rayjournal-system:rayjournal-operator",
             "extendedKeyUsage=clientAuth\n")
        run(["openssl", "genrsa", "-out", f"{d}/sa.key", "2048"])
        run(["openssl", "rsa", "-in", f"{d}/sa.key", "-pubout", "-out", f"{d}/sa.pub"])
        # A bearer token (static token file of the API server) read by the client from a file.
        with open(f"{d}/tokens.csv", "w") as f:
            f.write('e2e-admin-token,token-admin,100,"system:masters"\n')
        with open(f"{d}/token", "w") as f:
            f.write("e2e-admin-token\n")
        self.kubeconfig = self.write_kubeconfig("admin")
        self.operator_kubeconfig = self.write_kubeconfig("operator-sa")
        self.token_kubeconfig = self.write_kubeconfig("token-admin", "tokenFile: token")

    def write_kubeconfig(self, user, credentials=None):
        path = f"{self.dir}/{user}.kubeconfig"
        credentials = credentials or (f"client-certificate: {user}.crt\n"
                                      f"    client-key: {user}.key")
        with open(path, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:{self.api_port}
    certificate-authority: ca.crt
users:
- name: {user}
  user:
    {credentials}
contexts:
- name: e2e
  context: {{cluster: e2e, user: {user}}}
current-context: e2e
""")
        return path

    def start_etcd(self):
        d = self.dir
        self.procs["etcd"] = Process("etcd", [
            f"{self.bin}/etcd", "--data-dir", f"{d}/etcd", "--name", "e2e",
            "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_port}",
            "--initial-cluster", f"e2e=http://127.0.0.1:{self.peer_port}",
            "--unsafe-no-fsync"], d).start()

    def start_apiserver(self):
        d = self.dir
        self.procs["kube-apiserver"] = Process("kube-apiserver", [
            f"{self.bin}/kube-apiserver", f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            "--bind-address=127.0.0.1", f"--secure-port={self.api_port}",
            f"--tls-cert-file={d}/server.crt", f"--tls-private-key-file={d}/server.key",
            f"--client-ca-file={d}/ca.crt", f"--token-auth-file={d}/tokens.csv",
            "--authorization-mode=RBAC",
            "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-issuer=https://127.0.0.1:{self.api_port}",
            f"--service-account-key-file={d}/sa.pub",
            f"--service-account-signing-key-file={d}/sa.key",
            "--allow-privileged=true", "--disable-admission-plugins=ServiceAccount",
            "--endpoint-reconciler-type=none", *self.apiserver_flags], d).start()
        wait_until("kube-apiserver /readyz", self.ready, 120, 0.5)

    def ready(self):
        try:
            return self.kube.request("GET", "/readyz", raw=True) == "ok"
        except (ApiError, OSError, ValueError):
            return False

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        self.certs()
        self.kube = Kube(self.api_port, f"{self.dir}/ca.crt", f"{self.dir}/admin.crt",
                         f"{self.dir}/admin.key")
        self.start_etcd()
        self.start_apiserver()
        self.procs["kube-controller-manager"] = Process("kube-controller-manager", [
            f"{self.bin}/kube-controller-manager", f"--kubeconfig={self.kubeconfig}",
            "--leader-elect=false",
            "--controllers=garbagecollector,job,namespace,ttl-after-finished",
            "--use-service-account-credentials=false", "--secure-port=0",
            f"--root-ca-file={self.dir}/ca.crt", "--kube-api-qps=200", "--kube-api-burst=400"],
            self.dir).start()

    def kubectl(self, *args, check=True):
        """kubectl's stdout; with check=False the whole CompletedProcess, whatever it exited."""
        done = subprocess.run([f"{self.bin}/kubectl", f"--kubeconfig={self.kubeconfig}", *args],
                              check=check, capture_output=True, text=True)
        return done.stdout if check else done

    def restart_apiserver(self):
        self.procs["kube-apiserver"].stop()
        self.start_apiserver()

    def stop(self):
        for name in ["kube-controller-manager", "kube-apiserver", "etcd"]:
            if name in self.procs:
                self.procs[name].stop()


class HeadExited(StopWaiting):
    """The `ray start` of a RayHead exited before the head was ready."""


class HeadUnready(Exception):
    """A RayHead's `ray start` runs, but the head did not answer or run a job in time."""


class RayHead:
    """A real Ray head from the virtualenv, on loopback, in its own temp dir."""

    def __init__(self, venv, log_dir):
        self.venv = venv
        self.log_dir = log_dir
        self.temp = tempfile.mkdtemp(prefix="rjray")
        self.dashboard_port = free_port()
        self.proc = None

    def env(self):
        env = dict(os.environ)
        env["PATH"] = f"{self.venv}/bin:" + env["PATH"]
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        env.pop("RAY_ADDRESS", None)
        return env

    def start(self, attempts=3):
        """Starts the head and waits until it runs a job. A head whose `ray start` exits (a port
        taken after all, a component that died), or that lives without answering in time, is
        reported with its logs and replaced by one on other ports and a new temp dir, up to
        `attempts` heads."""
        for attempt in range(1, attempts + 1):
            try:
                self.launch()
                self.wait_ready()
                return self
            except (HeadExited, HeadUnready) as e:
                print(f"Ray head attempt {attempt} of {attempts} failed: {e}", file=sys.stderr)
                self.stop()
                if attempt == attempts:
                    raise
                self.temp = tempfile.mkdtemp(prefix="rjray")
                self.dashboard_port = free_port()
        return self

    def launch(self):
        ports = [free_port() for _ in range(4)]
        low, high = ray_worker_ports()
        self.proc = Process("ray-head", [
            f"{self.venv}/bin/ray", "start", "--head", "--block", "--disable-usage-stats",
            "--node-ip-address=127.0.0.1", "--dashboard-host=127.0.0.1",
            f"--dashboard-port={self.dashboard_port}", "--include-dashboard=true",
            f"--port={ports[0]}", f"--dashboard-agent-listen-port={ports[1]}",
            f"--ray-client-server-port={ports[2]}", f"--metrics-export-port={ports[3]}",
            f"--min-worker-port={low}", f"--max-worker-port={high}",
            "--num-cpus=2", "--object-store-memory=200000000", f"--temp-dir={self.temp}"],
            self.log_dir, env=self.env()).start()

    def alive_request(self, method, path, body=None):
        """request(), but a head whose `ray start` has exited raises HeadExited at once."""
        if not self.proc.alive():
            raise HeadExited(self.diagnosis())
        return self.request(method, path, body)

    def wait_ready(self):
        try:
            self.wait_ready_unexplained()
        except TimeoutError as e:
            raise HeadUnready(f"{e}\n{self.session_log_tails()}") from None

    def session_log_tails(self):
        """The last lines of the Ray logs that tell why a live head does not answer."""
        out = []
        logs = os.path.join(self.temp, "session_latest", "logs")
        for name in ["dashboard.log", "dashboard.err", "gcs_server.err", "raylet.err"]:
            try:
                with open(os.path.join(logs, name), errors="replace") as f:
                    lines = f.read().splitlines()[-8:]
            except OSError:
                continue
            out.append(f"{name}:\n  " + "\n  ".join(lines))
        return "\n".join(out) or f"no Ray session logs under {logs}"

    def wait_ready_unexplained(self):
        wait_until("Ray dashboard /api/version",
                   lambda: self.alive_request("GET", "/api/version")[0] == 200, 120, 1)
        probe = f"probe-{os.getpid()}"

        def probe_submitted():
            status, body = self.alive_request("POST", "/api/jobs/", {"entrypoint": "true",
                                                                     "submission_id": probe})
            return status == 200 or "already exists" in body

        wait_until("Ray accepting jobs", probe_submitted, 180, 1)
        wait_until("Ray probe job SUCCEEDED",
                   lambda: (self.alive_request("GET", f"/api/jobs/{probe}")[0] == 200
                            and self.job(probe)["status"] == "SUCCEEDED"), 180, 1)

    def diagnosis(self):
        """Why the head is gone: the exit code and the last lines `ray start` printed."""
        lines = self.proc.log().splitlines()
        tail = "\n  ".join(lines[-12:])
        return f"`ray start` exited with {self.proc.proc.returncode}; its log ends:\n  {tail}"

    @property
    def address(self):
        return f"127.0.0.1:{self.dashboard_port}"

    def request(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.dashboard_port, timeout=30)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data,
                         headers={"Content-Type": "application/json"} if data else {})
            res = conn.getresponse()
            return res.status, res.read().decode()
        finally:
            conn.close()

    def job(self, submission_id):
        status, body = self.request("GET", f"/api/jobs/{submission_id}")
        return json.loads(body) if status == 200 else None

    def job_monitor_ended(self, submission_id):
        """Whether Ray's dashboard stopped watching a finished job: its monitor writes
        "Completed a ray job <id> ..." to the JOBS event log as it ends. Until then a new
        submission under the same id is not safe: the old monitor, finding its supervisor actor
        dead and the new record not terminal, marks the new run FAILED ("Job supervisor actor
        died"), which Ray's own job_manager does within its 1 s monitor period."""
        path = os.path.join(self.temp, "session_latest", "logs", "events", "event_JOBS.log")
        try:
            with open(path) as f:
                return f"Completed a ray job {submission_id} with" in f.read()
        except FileNotFoundError:
            return False

    def jobs(self):
        status, body = self.request("GET", "/api/jobs/")
        assert status == 200, body
        return json.loads(body)

    def stop(self):
        if self.proc:
            self.proc.stop(60)
        shutil.rmtree(self.temp, ignore_errors=True)


class RayProxy(threading.Thread):
    """Plain HTTP in front of a RayHead's dashboard for one operator. It forwards every request
    and its answer; when after_submit(submission_id) returns True for a job submission Ray has
    accepted, the answer is never sent (the connection closes): the moment a crash leaves a
    submission in doubt, reached on purpose rather than by a lucky kill."""

    def __init__(self, ray, after_submit=None):
        super().__init__(daemon=True)
        self.ray, self.after_submit = ray, after_submit
        self.submissions = []  # the submission ids Ray accepted through this proxy, in order
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                proxy.forward(self)

            def do_POST(self):
                proxy.forward(self)

            def do_DELETE(self):
                proxy.forward(self)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"

    def run(self):
        self.server.serve_forever(poll_interval=0.2)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def forward(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        conn = http.client.HTTPConnection("127.0.0.1", self.ray.dashboard_port, timeout=60)
        try:
            conn.request(handler.command, handler.path, body=body,
                         headers={"Content-Type": handler.headers.get("Content-Type",
                                                                      "application/json")})
            res = conn.getresponse()
            data = res.read()
        finally:
            conn.close()
        if handler.command == "POST" and handler.path.rstrip("/") == "/api/jobs" and \
                res.status == 200:
            submission_id = json.loads(data).get("submission_id", "")
            self.submissions.append(submission_id)
            if self.after_submit and self.after_submit(submission_id):
                handler.close_connection = True
                return
        handler.send_response(res.status)
        handler.send_header("Content-Type", res.getheader("Content-Type") or "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


class FakeKubelet(threading.Thread):
    """Plays the kubelet. By default Pods of Ray clusters just become Running and Ready, and a
    submitter Job's Pod runs its container command on this machine against the shared Ray head
    (the dashboard address rewritten to loopback), then Succeeded or Failed with the exit code.

    In the namespaces listed in real_namespaces nothing is faked: every Pod runs the containers
    the operator generated (RealPod), so Ray is started only by the operator's own `ray start`
    commands. Pods being deleted are removed once their processes are gone."""

    def __init__(self, kube, ray_head, log_dir):
        super().__init__(daemon=True)
        self.kube = kube
        self.ray = ray_head
        self.log_dir = log_dir
        self.running = {}  # (ns, name) -> Popen
        self.real = {}  # (ns, name) -> RealPod
        self.real_namespaces = set()
        self.stopping = threading.Event()
        self.errors = []
        self.kubectl = None  # set by World: the token requests of service-account mounts
        self.ca_path = None  # set by World: the cluster CA mounted beside a token
        self.last_ip = 1
        self.real_lock = threading.RLock()  # self.real: the loop's, and a test's stop_namespace

    def pod_ip(self):
        """A loopback address of its own for each real Pod (127.0.0.2 up), as each Pod's
        network namespace would have: Ray and its autoscaler tell nodes apart by IP."""
        self.last_ip = self.last_ip % 253 + 1
        return f"127.0.0.{self.last_ip + 1}"

    def run(self):
        while not self.stopping.is_set():
            try:
                pods = self.kube.list("Pod")
                with self.real_lock:
                    for pod in pods:
                        self.sync(pod)
                    self.reap()
                    self.forget_vanished({(p["metadata"]["namespace"], p["metadata"]["name"])
                                          for p in pods})
            except Exception as e:  # noqa: BLE001 - the API server may be restarting
                self.errors.append(str(e))
            self.stopping.wait(0.25)

    def sync(self, pod):
        m = pod["metadata"]
        key = (m["namespace"], m["name"])
        phase = pod.get("status", {}).get("phase", "Pending")
        if m.get("deletionTimestamp"):
            proc = self.running.pop(key, None)
            if proc and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            real = self.real.pop(key, None)
            if real:
                real.kill()
            self.kube.delete("Pod", key[0], key[1], grace=0)
            return
        if key[0] in self.real_namespaces and "Job" not in self.owner_kinds(pod):
            known = self.real.get(key)
            if known and known.uid != m["uid"]:
                # A Pod never scheduled to a node is deleted at once, without a deletion
                # timestamp for the kubelet to see: its processes go when its successor comes.
                known.kill()
                known = None
            if known is None and phase == "Pending":
                self.real[key] = RealPod(self, pod).start()
            return
        if phase != "Pending":
            return
        if "Job" in self.owner_kinds(pod):
            self.start_container(pod)
        else:
            self.set_status(pod, "Running", ready=True)

    def stop_namespace(self, ns):
        """Ends the real Pods of ns (a test's, when it is over): a head left running would keep
        Ray's fixed ports (GCS, dashboard) from the next test's."""
        with self.real_lock:
            self.real_namespaces.discard(ns)
            for key in [k for k in self.real if k[0] == ns]:
                self.real.pop(key).kill()

    def forget_vanished(self, listed):
        """A Pod never scheduled to a node is deleted at once, without a deletion timestamp for
        the kubelet to see: its processes go when it is no longer listed."""
        for key in [k for k in self.real if k not in listed]:
            self.real.pop(key).kill()

    @staticmethod
    def owner_kinds(pod):
        return {r.get("kind") for r in pod["metadata"].get("ownerReferences", [])}

    def kill_container(self, ns, name):
        """The Ray container of a real Pod dies (SIGKILL), as a crash or an OOM kill would."""
        self.real[(ns, name)].kill(deleted=False)

    def start_container(self, pod):
        m = pod["metadata"]
        c = pod["spec"]["containers"][0]
        env = self.ray.env()
        dashboard = ""
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = e["value"]
            if e["name"] == "RAY_DASHBOARD_ADDRESS":
                dashboard = e["value"]
        cmd = list(c.get("command", [])) + list(c.get("args", []))
        if m["namespace"] in self.real_namespaces:
            # The cluster's own head, reached through its Service as a Pod would.
            cmd = [loopback_services(part) for part in cmd]
            env["RAY_DASHBOARD_ADDRESS"] = loopback_services(dashboard)
        else:
            if dashboard:
                cmd = [part.replace(dashboard, self.ray.address) for part in cmd]
            env["RAY_DASHBOARD_ADDRESS"] = self.ray.address
        log = open(os.path.join(self.log_dir, f"pod-{m['namespace']}-{m['name']}.log"), "ab")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        log.close()
        self.running[(m["namespace"], m["name"])] = proc
        self.set_status(pod, "Running", ready=True)

    def reap(self):
        for key, proc in list(self.running.items()):
            code = proc.poll()
            if code is None:
                continue
            del self.running[key]
            pod = self.kube.get("Pod", *key)
            if pod and not pod["metadata"].get("deletionTimestamp"):
                self.set_status(pod, "Succeeded" if code == 0 else "Failed", ready=False,
                                exit_code=code)

    def set_status(self, pod, phase, ready, exit_code=None, restarts=0, ip="10.0.0.2"):
        """Writes the Pod's status; False when the write lost to a concurrent one (409)."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        name = pod["spec"]["containers"][0]["name"]
        if exit_code is None:
            state = {"running": {"startedAt": now}}
        else:
            state = {"terminated": {"exitCode": exit_code, "startedAt": now, "finishedAt": now,
                                    "reason": "Completed" if exit_code == 0 else "Error"}}
        pod["status"] = {
            "phase": phase, "podIP": ip, "hostIP": "10.0.0.1", "startTime": now,
            "conditions": [{"type": t, "status": "True" if ready else "False",
                            "lastTransitionTime": now}
                           for t in ("Initialized", "PodScheduled", "ContainersReady", "Ready")],
            "containerStatuses": [{"name": name, "ready": ready, "restartCount": restarts,
                                   "image": pod["spec"]["containers"][0].get("image", ""),
                                   "imageID": "", "state": state}]}
        try:
            self.kube.update_status("Pod", pod)
        except ApiError as e:
            if e.status not in (404, 409):
                raise
            return e.status == 404
        return True

    def stop(self):
        self.stopping.set()
        self.join(10)
        for proc in self.running.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for real in self.real.values():
            real.kill()


SERVICE_HOST = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                          r"\.svc\.cluster\.local")


def loopback_services(text):
    """Every Service address (<svc>.<ns>.svc.cluster.local) as 127.0.0.1: this machine is the
    whole cluster, and a Ray head's Service exposes its container ports unchanged."""
    return SERVICE_HOST.sub("127.0.0.1", text)


class RealPod:
    """One Pod run as the kubelet runs it, from the spec the operator wrote: init containers in
    order, then every container with the env it declares ($(VAR) references expanded, the API
    server's address injected as the kubelet does) and, when the Pod names a ServiceAccount, a
    token of that ServiceAccount (TokenRequest) with the cluster CA at the in-cluster path,
    bind-mounted in a mount namespace of the container's own. Running once the first container
    runs, Ready once its readiness probe (httpGet or exec, as generated) passes; Failed or
    Succeeded when it exits under restartPolicy Never, restarted in place otherwise; the other
    containers (the autoscaler sidecar) restart by the same policy until the Pod goes.
    Adjustments for one machine, nothing else: Service addresses are loopback, the Pod's IP is a
    loopback address of its own (Ray binds it), and a worker's own listening ports (metrics,
    dashboard agent) move to free ports, as its own network namespace would have kept them apart
    from the head's."""

    PRIVATE_PORT_FLAGS = ("metrics-export-port", "dashboard-agent-listen-port")
    TOKEN_DIR = "secrets/kubernetes.io/serviceaccount"  # under /run, that is /var/run

    def __init__(self, kubelet, pod):
        self.kubelet = kubelet
        self.pod = pod
        m = pod["metadata"]
        self.key = (m["namespace"], m["name"])
        self.uid = m["uid"]
        self.head = m.get("labels", {}).get("ray.io/node-type") == "head"
        self.ip = kubelet.pod_ip()
        self.ports = {}  # the worker's private port flags -> (declared, free) port
        self.proc = None
        self.sidecars = {}  # container name -> Popen
        self.run_dir = None  # what the containers see as /run, when a token is mounted
        self.deleted = threading.Event()
        self.restarts = 0
        self.log = os.path.join(kubelet.log_dir, f"pod-{self.key[0]}-{self.key[1]}.log")

    def start(self):
        threading.Thread(target=self.lifecycle, daemon=True).start()
        return self

    def declared_env(self, container):
        """What the kubelet gives the container: the API server's Service variables and the
        env the container declares, in order (a $(VAR) sees only the ones before it)."""
        api_port = str(self.kubelet.kube.port)
        declared = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": api_port,
                    "KUBERNETES_SERVICE_PORT_HTTPS": api_port}
        m = self.pod["metadata"]
        fields = {"metadata.name": m["name"], "metadata.namespace": m["namespace"],
                  "status.podIP": self.ip}
        for k, v in m.get("labels", {}).items():
            fields[f"metadata.labels['{k}']"] = v
        for e in container.get("env", []):
            if "value" in e:
                declared[e["name"]] = loopback_services(expand_references(e["value"], declared))
            else:
                path = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", "")
                declared[e["name"]] = fields.get(path, "")
        return declared

    def env(self, declared):
        """The process env: the Ray virtualenv's (this machine is the image) and the declared."""
        env = self.kubelet.ray.env()
        env.pop("RAY_ADDRESS", None)
        env["RAY_START_ULIMIT_OPEN_FILES"] = str(resource_limit_nofile())
        env.update(declared)
        return env

    def localize(self, text):
        text = loopback_services(text)
        text = text.replace("--dashboard-host=0.0.0.0", "--dashboard-host=127.0.0.1")
        text = re.sub(r"\bray start ", f"ray start --node-ip-address={self.ip} ", text)
        if not self.head:
            for flag in self.PRIVATE_PORT_FLAGS:
                def remap(match, flag=flag):
                    self.ports.setdefault(flag, (int(match.group(1)), free_port()))
                    return f"--{flag}={self.ports[flag][1]}"
                text = re.sub(rf"--{flag}=(\d+)", remap, text)
        return text

    def command(self, container, env):
        cmd = [self.localize(expand_references(part, env))
               for part in container.get("command", []) + container.get("args", [])]
        if self.run_dir is None:
            return cmd
        # The token at /var/run/secrets/...: /run replaced for this container alone.
        as_root = [] if os.geteuid() == 0 else ["--map-root-user"]
        return ["unshare", "--mount", "--propagation", "private", *as_root, "sh", "-c",
                'mount --bind "$0" /run && exec "$@"', self.run_dir, *cmd]

    def spawn(self, container, log_path=None):
        declared = self.declared_env(container)
        with open(log_path or self.log, "ab") as log:
            return subprocess.Popen(self.command(container, declared), stdout=log,
                                    stderr=subprocess.STDOUT, env=self.env(declared),
                                    start_new_session=True)

    def mount_service_account(self):
        """The kubelet's projected token: a TokenRequest for the Pod's ServiceAccount, which
        fails (and the Pod stays Pending) when that ServiceAccount does not exist."""
        spec = self.pod["spec"]
        account = spec.get("serviceAccountName")
        if not account or spec.get("automountServiceAccountToken") is False:
            return
        token = self.kubelet.kubectl("create", "token", account, "-n", self.key[0],
                                     "--duration=1h")
        self.run_dir = tempfile.mkdtemp(prefix="rjrun", dir=self.kubelet.log_dir)
        target = os.path.join(self.run_dir, self.TOKEN_DIR)
        os.makedirs(target)
        with open(os.path.join(target, "token"), "w") as f:
            f.write(token.strip())
        shutil.copy(self.kubelet.ca_path, os.path.join(target, "ca.crt"))
        with open(os.path.join(target, "namespace"), "w") as f:
            f.write(self.key[0])

    def lifecycle(self):
        try:
            self.mount_service_account()
            for init in self.pod["spec"].get("initContainers", []):
                self.proc = self.spawn(init)
                if self.proc.wait() != 0 and not self.deleted.is_set():
                    self.status("Failed", False, self.proc.returncode)
                if self.proc.returncode != 0 or self.deleted.is_set():
                    return
            main, *others = self.pod["spec"]["containers"]
            for sidecar in others:
                threading.Thread(target=self.run_sidecar, args=(sidecar,), daemon=True).start()
            self.run_main(main)
        except Exception as e:  # noqa: BLE001 - reported by the test through kubelet.errors
            self.kubelet.errors.append(f"{self.key}: {e}")
        finally:
            if not self.deleted.is_set():
                self.stop_sidecars()

    def run_main(self, main):
        while True:
            self.proc = self.spawn(main)
            self.status("Running", False)
            self.await_ready(main)
            code = self.proc.wait()
            if self.deleted.is_set() or self.kubelet.stopping.is_set():
                return
            if self.pod["spec"].get("restartPolicy", "Always") == "Never":
                self.status("Succeeded" if code == 0 else "Failed", False, code)
                return
            self.restarts += 1

    def run_sidecar(self, container):
        log = os.path.join(self.kubelet.log_dir,
                           f"pod-{self.key[0]}-{self.key[1]}-{container['name']}.log")
        while not (self.deleted.is_set() or self.kubelet.stopping.is_set()):
            proc = self.sidecars[container["name"]] = self.spawn(container, log)
            proc.wait()
            if self.pod["spec"].get("restartPolicy", "Always") == "Never":
                return
            self.deleted.wait(1)

    def stop_sidecars(self):
        for proc in self.sidecars.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def await_ready(self, container):
        probe = container.get("readinessProbe")
        while self.proc.poll() is None:
            if probe is None or self.probe_passes(probe):
                self.status("Running", True)
                return
            time.sleep(1)

    def probe_passes(self, probe):
        if "httpGet" in probe:
            port = probe["httpGet"]["port"]
            for declared, actual in self.ports.values():
                port = actual if port == declared else port
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{probe['httpGet']['path']}",
                                            timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        cmd = [self.localize(part) for part in probe.get("exec", {}).get("command", [])]
        return subprocess.run(cmd, capture_output=True, timeout=10).returncode == 0

    def status(self, phase, ready, exit_code=None):
        for _ in range(5):  # a conflicting write is retried on the Pod as it is now
            pod = self.kubelet.kube.get("Pod", *self.key)
            if pod is None or pod["metadata"].get("deletionTimestamp") or \
                    pod["metadata"]["uid"] != self.uid or self.deleted.is_set():
                return
            if self.kubelet.set_status(pod, phase, ready, exit_code, restarts=self.restarts,
                                       ip=self.ip):
                return

    def kill(self, deleted=True):
        """Kills the running container; deleted: the Pod is going away, nothing restarts."""
        if deleted:
            self.deleted.set()
            self.stop_sidecars()
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


VAR_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand_references(text, env):
    """The kubelet's $(VAR) expansion in command, args and env values: a defined variable is
    replaced, an undefined reference stays as written, $$ is a literal $."""
    def one(match):
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return VAR_REFERENCE.sub(one, text)


def resource_limit_nofile():
    import resource
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


class World:
    """What every e2e test runs its operator against: the control plane with KubeRay's CRDs, a
    real Ray head and the fake kubelet, under one work dir. stop() tears down whatever started."""

    def __init__(self, cache, root, prefix):
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs)
        self.cache, self.root = cache, root
        self.cp = ControlPlane(cache, os.path.join(self.work, "cp"))
        self.ray = None
        self.kubelet = None

    def start(self):
        try:
            started = time.monotonic()
            self.cp.start()
            self.kube = self.cp.kube
            # KubeRay v1.7.0's CRDs, too large for a client-side apply's annotation.
            self.cp.kubectl("apply", "--server-side", "-f", os.path.join(self.root, "deploy/crds"))
            wait_until("CRDs served", lambda: self.kube.list("RayJob") is not None, 60, 0.5)
            print(f"control plane up in {time.monotonic() - started:.1f}s", file=sys.stderr)
            started = time.monotonic()
            self.ray = RayHead(os.path.join(self.cache, "ray-venv"), self.logs).start()
            print(f"Ray head up in {time.monotonic() - started:.1f}s", file=sys.stderr)
            self.kubelet = FakeKubelet(self.kube, self.ray, self.logs)
            self.kubelet.kubectl = self.cp.kubectl
            self.kubelet.ca_path = os.path.join(self.cp.dir, "ca.crt")
            self.kubelet.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        if self.kubelet:
            self.kubelet.stop()
        if self.ray:
            self.ray.stop()
        self.cp.stop()
        if os.environ.get("E2E_KEEP") != "1":
            run(["rm", "-rf", self.work])
        else:
            print(f"e2e work dir kept: {self.work}", file=sys.stderr)


class OperatorCase(unittest.TestCase):
    """A class of e2e tests: one World for the class; per test a namespace named after the test,
    a journal, and the operators it starts (stopped after it, their logs' tails printed when it
    failed). A test file sets operator, replay, cache and root."""

    operator = replay = cache = root = None
    prefix = "rje2e-"

    @classmethod
    def setUpClass(cls):
        cls.world = World(cls.cache, cls.root, cls.prefix).start()
        cls.work, cls.logs, cls.cp = cls.world.work, cls.world.logs, cls.world.cp
        cls.kube, cls.ray, cls.kubelet = cls.world.kube, cls.world.ray, cls.world.kubelet

    @classmethod
    def tearDownClass(cls):
        cls.world.stop()

    def setUp(self):
        self.ns = self.id().split(".")[-1].replace("_", "-")[:40].strip("-")
        self.kube.create_namespace(self.ns)
        self.journal = os.path.join(self.work, "journal-" + self.ns)
        self.operators = []

    def tearDown(self):
        for op in self.operators:
            op.stop()
        self.kubelet.stop_namespace(self.ns)
        failed = any(e for _, e in (self._outcome.result.errors + self._outcome.result.failures)
                     if _ is self)
        if failed:
            for op in self.operators:
                print(f"--- {op.name} log (tail) ---\n{op.log()[-6000:]}", file=sys.stderr)

    def start_operator(self, *extra, journal=None, kubeconfig=None, dashboard=None):
        op = Process(f"operator-{self.ns}-{len(self.operators)}", [
            self.operator, f"--kubeconfig={kubeconfig or self.cp.kubeconfig}",
            f"--journal-dir={journal or self.journal}",
            f"--ray-dashboard-address={dashboard or self.ray.address}", "--requeue-ms=500",
            "--log-level=debug", "--metrics-bind-address=0", *extra], self.logs).start()
        self.operators.append(op)
        return op

    def status(self, name):
        job = self.kube.get("RayJob", self.ns, name)
        return (job or {}).get("status", {})

    def wait_status(self, name, deployment, timeout=180):
        def reached():
            s = self.status(name)
            if s.get("jobDeploymentStatus") == deployment:
                return s
            return None
        return wait_until(lambda: f"RayJob {self.ns}/{name} {deployment} "
                                  f"(now {self.status(name)})", reached, timeout, 0.3)

    def verify_journal(self, journal=None):
        out = run([self.replay, "verify", "--journal", journal or self.journal])
        self.assertIn("ok", out.stdout.lower())
