"""A kubelet stand-in careful enough for KubeRay's own e2e tests, on one machine, as root.

Every Pod is bound to one Node and gets a network namespace of its own on a host-only bridge
(10.244.0.0/16, no route out), so Ray's fixed ports (GCS 6379, dashboard 8265) never collide
between clusters. Each container runs as a real process from the exact command, args and env the
operator wrote, in a mount namespace of its own where its volumes (ConfigMap, Secret, emptyDir,
downwardAPI, projected) sit at their mount paths, /tmp is the Pod's own, and /etc/resolv.conf
points at ServiceDns, which answers Service names with the IPs of the Pods behind them. Images
rayproject/ray:* run from the e2e virtualenv (this machine is the image); any other image fails to
pull, as a kubelet reports it. Init containers in order, then all containers; readiness probes
(exec in the Pod's namespaces, httpGet to the Pod IP); restart policies; graceful deletion.
Standard library only; the control plane and helpers come from tests/e2e/harness.py."""

import base64
import collections
import json
import os
import shlex
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from harness import ApiError, Kube, expand_references  # noqa: E402

BRIDGE, GATEWAY, PREFIX = "rjbr0", "10.244.0.1", 16
NODE = "kuberay-e2e-node"
Kube.PATHS.update({
    "ConfigMap": ("/api/v1", "configmaps"),
    "Secret": ("/api/v1", "secrets"),
    "Node": ("/api/v1", "nodes"),
    "Service": ("/api/v1", "services"),
})


def sh(*cmd, check=True, timeout=60):
    """Runs cmd; a failure or a hang (past timeout) raises an error naming the command and what
    it printed."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{shlex.join(cmd)}: no exit after {timeout} s") from None
    if check and done.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)}: exit {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[:300]}")
    return done


class PodNet:
    """The bridge and one network namespace per Pod (veth into the bridge). Namespaces are rjp<n>,
    their host ends rjv<n> and their IPs follow from n, so a name left by a run that never
    stopped (killed, or a machine image taken with it) would give a Pod a namespace that exists
    or an IP that is taken: up() clears them, and add() passes over any name still in use."""

    def __init__(self):
        self.next = 2
        self.lock = threading.Lock()

    def up(self):
        """Returns the leftover names it cleared."""
        leftovers = self.clear_leftovers()
        if sh("ip", "link", "show", BRIDGE, check=False).returncode != 0:
            sh("ip", "link", "add", BRIDGE, "type", "bridge")
            sh("ip", "addr", "add", f"{GATEWAY}/{PREFIX}", "dev", BRIDGE)
        sh("ip", "link", "set", BRIDGE, "up")
        return leftovers

    def down(self):
        self.clear_leftovers()
        sh("ip", "link", "delete", BRIDGE, check=False)

    @staticmethod
    def clear_leftovers():
        """Deletes every rjp* namespace and rjv* link (a link outlives its namespace's name
        while a process still runs in it); returns the names it found."""
        names = [ns for ns in sh("ip", "netns", "list").stdout.split() if ns.startswith("rjp")]
        links = PodNet.links_named("rjv")  # listed first: a namespace's deletion takes its veth
        for ns in names:
            sh("ip", "netns", "delete", ns, check=False)
        for host in links:
            sh("ip", "link", "delete", host, check=False)
        return names + links

    @staticmethod
    def links_named(prefix):
        out = sh("ip", "-o", "link", "show").stdout
        return [line.split(":")[1].strip().split("@")[0] for line in out.splitlines()
                if line.split(":")[1].strip().startswith(prefix)]

    @staticmethod
    def in_use(ns, host):
        return os.path.exists(f"/run/netns/{ns}") or \
            sh("ip", "link", "show", host, check=False).returncode == 0

    def add(self, attempts=3):
        """A new namespace: (its name, the Pod's IP). A setup that fails is undone and tried
        again with a new namespace, as a kubelet retries a Pod sandbox; the last error is raised.
        Names still in use are passed over without counting as attempts."""
        attempt = 0
        while True:
            with self.lock:
                n = self.next
                self.next += 1
            ns, host, ip = f"rjp{n}", f"rjv{n}", f"10.244.{n // 250}.{n % 250 + 2}"
            if n >= 250 * 250:
                raise RuntimeError("no free Pod network namespace left (rjp2..rjp62499 in use)")
            if self.in_use(ns, host):
                continue
            try:
                self.setup(ns, host, ip)
                return ns, ip
            except RuntimeError:
                self.remove(ns)
                attempt += 1
                if attempt == attempts:
                    raise

    @staticmethod
    def setup(ns, host, ip):
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)
        sh("ip", "link", "set", host, "master", BRIDGE, "up")
        # `ip -n` enters only the network namespace (`ip netns exec` also remounts /sys).
        for cmd in (["addr", "add", f"{ip}/{PREFIX}", "dev", "eth0"], ["link", "set", "eth0", "up"],
                    ["link", "set", "lo", "up"], ["route", "add", "default", "via", GATEWAY]):
            sh("ip", "-n", ns, *cmd)

    @staticmethod
    def remove(ns):
        sh("ip", "netns", "delete", ns, check=False)


class ServiceDns(threading.Thread):
    """A DNS server on the bridge: <svc>.<ns>.svc.cluster.local (and the search forms) answer
    with the IPs of the ready Pods the Service selects (all of them when it publishes
    not-ready addresses); <pod-hostname>.<subdomain>.<ns>.svc.cluster.local as well. Nothing
    else resolves: the Pods have no route out."""

    def __init__(self, kubelet):
        super().__init__(daemon=True)
        self.kubelet = kubelet
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((GATEWAY, 53))
        self.sock.settimeout(0.5)
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                data, peer = self.sock.recvfrom(512)
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                self.sock.sendto(self.answer(data), peer)
            except Exception as e:  # noqa: BLE001 - a malformed query is dropped
                self.kubelet.error(f"dns: {e}")

    def stop(self):
        self.stopping.set()
        self.sock.close()
        self.join(2)

    def answer(self, query):
        qid, _flags, qd = struct.unpack(">HHH", query[:6])
        pos, labels = 12, []
        while query[pos]:
            n = query[pos]
            labels.append(query[pos + 1:pos + 1 + n].decode().lower())
            pos += 1 + n
        qtype = struct.unpack(">H", query[pos + 1:pos + 3])[0]
        question = query[12:pos + 5]
        ips = self.resolve(labels) if qtype == 1 else []
        known = qtype != 1 or ips
        flags = 0x8180 if known else 0x8183  # NXDOMAIN when the name is nobody's
        header = struct.pack(">HHHHHH", qid, flags, 1, len(ips), 0, 0)
        records = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(ip)
                           for ip in ips)
        return header + question + records

    def resolve(self, labels):
        if len(labels) < 2 or labels[-3:] != ["svc", "cluster", "local"] and \
                labels[-2:] != ["svc", "cluster"] and labels[-1:] != ["svc"]:
            return []
        while labels and labels[-1] in ("local", "cluster"):
            labels = labels[:-1]
        if len(labels) == 3:
            return self.kubelet.service_ips(labels[1], labels[0])
        if len(labels) == 4:
            return self.kubelet.hostname_ips(labels[2], labels[1], labels[0])
        return []


def quantity(text):
    """A Kubernetes quantity as a float (1500m -> 1.5, 2Gi -> 2147483648)."""
    text = str(text)
    units = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20,
             "Gi": 2**30, "Ti": 2**40}
    for suffix in sorted(units, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * units[suffix]
    return float(text)


class ImagePullError(Exception):
    pass


class StandinPod:
    """One Pod on the stand-in: its namespace, its volumes, its containers' processes, and the
    status a kubelet would write for them."""

    def __init__(self, kubelet, pod):
        self.kubelet, self.pod = kubelet, pod
        m = pod["metadata"]
        self.key, self.uid = (m["namespace"], m["name"]), m["uid"]
        self.root = os.path.join(kubelet.work, "pods", m["uid"])
        self.netns = self.ip = None
        self.procs = {}  # container name -> Popen
        self.states = {}  # container name -> {"state": ..., "ready": bool, "restarts": n}
        self.init_done = False
        self.deleted = threading.Event()
        self.lock = threading.Lock()
        self.started = time.monotonic()

    # --- setup ---

    def start(self):
        threading.Thread(target=self.lifecycle, daemon=True, name=f"pod-{self.key}").start()
        return self

    def prepare(self):
        os.makedirs(os.path.join(self.root, "tmp"))
        os.chmod(os.path.join(self.root, "tmp"), 0o1777)
        self.netns, self.ip = self.kubelet.net.add()
        ns = self.key[0]
        with open(os.path.join(self.root, "resolv.conf"), "w") as f:
            f.write(f"nameserver {GATEWAY}\nsearch {ns}.svc.cluster.local svc.cluster.local "
                    "cluster.local\noptions ndots:5\n")
        with open(os.path.join(self.root, "hosts"), "w") as f:
            f.write(f"127.0.0.1 localhost\n{self.ip} {self.hostname()}\n")
        for volume in self.pod["spec"].get("volumes", []):
            self.materialise(volume)

    def hostname(self):
        # As the kubelet's truncatePodHostnameIfNeeded: 63 characters, then no trailing '-' or
        # '.' (a worker named ...-small-group-worker-0 cut at 63 ends in '-', which sethostname
        # refuses: its init container then failed and the cluster never became ready).
        spec = self.pod["spec"]
        return (spec.get("hostname") or self.key[1])[:63].rstrip("-.")

    def materialise(self, volume):
        path = os.path.join(self.root, "volumes", volume["name"])
        os.makedirs(path, exist_ok=True)
        ns = self.key[0]
        if "configMap" in volume:
            self.write_items(path, self.kubelet.data_of("ConfigMap", ns, volume["configMap"]),
                             volume["configMap"].get("items"))
        elif "secret" in volume:
            self.write_items(path, self.kubelet.data_of("Secret", ns, volume["secret"],
                                                        "secretName"),
                             volume["secret"].get("items"))
        elif "downwardAPI" in volume:
            for item in volume["downwardAPI"].get("items", []):
                self.write_file(path, item["path"], self.field(item.get("fieldRef", {})))
        elif "projected" in volume:
            for source in volume["projected"].get("sources", []):
                for kind, ref in (("ConfigMap", source.get("configMap")),
                                  ("Secret", source.get("secret"))):
                    if ref:
                        self.write_items(path, self.kubelet.data_of(kind, ns, ref), ref.get("items"))
        # emptyDir (any medium) and anything else: an empty directory of the Pod's own.

    def write_items(self, path, data, items):
        pairs = [(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]
        for key, rel in pairs:
            self.write_file(path, rel, data.get(key, ""))

    @staticmethod
    def write_file(path, rel, text):
        target = os.path.join(path, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())

    def field(self, ref):
        m = self.pod["metadata"]
        path = ref.get("fieldPath", "")
        for prefix, source in (("metadata.labels", m.get("labels", {})),
                               ("metadata.annotations", m.get("annotations", {}))):
            if path == prefix:
                return "\n".join(f'{k}="{v}"' for k, v in sorted(source.items()))
            if path.startswith(prefix + "['"):
                return source.get(path[len(prefix) + 2:-2], "")
        return {"metadata.name": m["name"], "metadata.namespace": m["namespace"],
                "metadata.uid": m["uid"], "status.podIP": self.ip or "", "status.hostIP": GATEWAY,
                "spec.nodeName": NODE,
                "spec.serviceAccountName": self.pod["spec"].get("serviceAccountName", "default"),
                }.get(path, "")

    # --- containers ---

    def env_of(self, container):
        env = {"KUBERNETES_SERVICE_HOST": GATEWAY, "KUBERNETES_SERVICE_PORT": "443",
               "HOSTNAME": self.hostname()}
        ns = self.key[0]
        for source in container.get("envFrom", []):
            for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                if key in source:
                    data = self.kubelet.data_of(kind, ns, source[key], optional_ok=True)
                    env.update({source.get("prefix", "") + k: v.decode() if isinstance(v, bytes)
                                else v for k, v in data.items()})
        for e in container.get("env", []):
            if "value" in e:
                env[e["name"]] = expand_references(e["value"], env)
                continue
            source = e.get("valueFrom", {})
            if "fieldRef" in source:
                env[e["name"]] = self.field(source["fieldRef"])
            elif "resourceFieldRef" in source:
                env[e["name"]] = self.resource(container, source["resourceFieldRef"])
            else:
                for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
                    if key in source:
                        ref = source[key]
                        data = self.kubelet.data_of(kind, ns, ref, "name", optional_ok=True)
                        value = data.get(ref["key"], "")
                        env[e["name"]] = value.decode() if isinstance(value, bytes) else value
        return env

    @staticmethod
    def resource(container, ref):
        kind, _, name = ref.get("resource", "").partition(".")
        value = container.get("resources", {}).get(kind, {}).get(name)
        if value is None:
            return str(64 if name == "cpu" else 64 * 2**30)  # the Node's allocatable
        divisor = quantity(ref.get("divisor", "1"))
        return str(int(-(-quantity(value) // divisor)))

    def image_runtime(self, container):
        image = container.get("image", "")
        if not image.startswith("rayproject/ray:"):
            raise ImagePullError(f'Failed to pull image "{image}": the stand-in has only '
                                 "rayproject/ray images")
        return self.kubelet.venv

    def in_netns(self):
        """A command prefix entering only the Pod's network namespace (`ip netns exec` also
        remounts /sys, which nothing in a container needs)."""
        return ["nsenter", f"--net=/run/netns/{self.netns}"]

    def spawn(self, container, log):
        venv = self.image_runtime(container)
        env = self.env_of(container)
        cmd = [expand_references(part, env)
               for part in container.get("command", []) + container.get("args", [])]
        if not cmd:
            raise ImagePullError("the stand-in cannot run an image's own entrypoint")
        process_env = {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/home/ray",
                       "LANG": "C.UTF-8", "RAY_USAGE_STATS_ENABLED": "0"}
        process_env.update(env)
        mounts = []
        for m in container.get("volumeMounts", []):
            source = os.path.join("/mnt/volumes", m["name"], m.get("subPath", ""))
            mounts.append(f'mount_at "{source}" "{m["mountPath"]}"')
        workdir = container.get("workingDir") or "/home/ray"
        keep = " ".join(shlex.quote(os.path.realpath(k)) for k in self.kubelet.keep
                        if os.path.realpath(k).startswith("/tmp/"))
        script = f"KEEP={shlex.quote(keep)}\n" + MOUNT_SCRIPT + "\n".join(mounts) + f'\nmake_path "{workdir}" dir\ncd "{workdir}"\n' \
            f'hostname "{self.hostname()}"\nexec "$@"\n'
        wrapped = [*self.in_netns(), "unshare", "--mount", "--uts",
                   "--propagation", "private", "sh", "-c", script, self.root, *cmd]
        return subprocess.Popen(wrapped, stdout=log, stderr=subprocess.STDOUT, env=process_env,
                                start_new_session=True)

    def lifecycle(self):
        try:
            self.prepare()
            for init in self.pod["spec"].get("initContainers", []):
                if self.run_to_end(init) != 0:
                    self.report()
                    return
            self.init_done = True
            containers = self.pod["spec"]["containers"]
            threads = [threading.Thread(target=self.run_container, args=(c,), daemon=True)
                       for c in containers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.report()
        except ImagePullError as e:
            self.fail_pull(str(e))
        except Exception as e:  # noqa: BLE001 - the stand-in's own failure, reported
            self.kubelet.error(f"Pod {self.key[0]}/{self.key[1]}: {e}")

    def log_file(self, name):
        return open(os.path.join(self.kubelet.logs, f"{self.key[0]}-{self.key[1]}-{name}.log"),
                    "ab")

    def run_to_end(self, container):
        name = container["name"]
        with self.log_file(name) as log:
            proc = self.procs[name] = self.spawn(container, log)
        self.set_state(name, {"running": {"startedAt": now()}}, False)
        code = proc.wait()
        self.set_state(name, terminated(code), False)
        return code if not self.deleted.is_set() else 137

    def run_container(self, container):
        name, policy = container["name"], self.pod["spec"].get("restartPolicy", "Always")
        while not self.deleted.is_set():
            try:
                with self.log_file(name) as log:
                    proc = self.procs[name] = self.spawn(container, log)
            except ImagePullError as e:
                # This container waits, as under a kubelet; the Pod's others run on.
                self.set_state(name, {"waiting": {"reason": "ErrImagePull", "message": str(e)}},
                               False)
                return
            self.set_state(name, {"running": {"startedAt": now()}}, False)
            self.await_ready(container, proc)
            code = proc.wait()
            self.set_state(name, terminated(code), False)
            if self.deleted.is_set() or policy == "Never" or (policy == "OnFailure" and code == 0):
                return
            self.states[name]["restarts"] = self.states[name].get("restarts", 0) + 1
            self.deleted.wait(1)

    def await_ready(self, container, proc):
        probe = container.get("readinessProbe")
        delay = probe.get("initialDelaySeconds", 0) if probe else 0
        self.deleted.wait(delay)
        while proc.poll() is None and not self.deleted.is_set():
            if probe is None or self.probe_passes(probe):
                self.set_state(container["name"], None, True)
                return
            self.deleted.wait(max(1, probe.get("periodSeconds", 1)))

    def probe_passes(self, probe):
        timeout = max(1, probe.get("timeoutSeconds", 1)) + 1
        if "httpGet" in probe:
            get = probe["httpGet"]
            try:
                with urllib.request.urlopen(f"http://{self.ip}:{get['port']}{get.get('path', '/')}",
                                            timeout=timeout) as r:
                    return 200 <= r.status < 400
            except OSError:
                return False
        if "tcpSocket" in probe:
            try:
                socket.create_connection((self.ip, probe["tcpSocket"]["port"]), timeout).close()
                return True
            except OSError:
                return False
        cmd = probe.get("exec", {}).get("command", [])
        try:
            return sh(*self.in_netns(), *cmd, check=False, timeout=timeout).returncode == 0
        except (OSError, subprocess.SubprocessError, RuntimeError):
            return False

    # --- status ---

    def set_state(self, name, state, ready):
        with self.lock:
            current = self.states.setdefault(name, {"restarts": 0})
            if state is not None:
                current["state"] = state
            became_ready = ready and not current.get("ready")
            current["ready"] = ready
        if became_ready:
            self.kubelet.note(f"{self.key[0]}/{self.key[1]} {name} ready "
                              f"{time.monotonic() - self.started:.1f} s after the Pod was seen")
        self.report()

    def phase(self):
        containers = self.pod["spec"]["containers"]
        states = [self.states.get(c["name"], {}).get("state", {}) for c in containers]
        if not self.init_done:
            failed = any(s.get("state", {}).get("terminated", {}).get("exitCode", 0)
                         for s in self.states.values())
            return "Failed" if failed and self.pod["spec"].get("restartPolicy") == "Never" \
                else "Pending"
        if all("terminated" in s for s in states):
            codes = [s["terminated"]["exitCode"] for s in states]
            policy = self.pod["spec"].get("restartPolicy", "Always")
            if policy == "Never" or (policy == "OnFailure" and not any(codes)):
                return "Failed" if any(codes) else "Succeeded"
        return "Running" if any(states) else "Pending"

    def report(self):
        if self.deleted.is_set():
            return
        with self.lock:
            phase = self.phase()
            statuses = [{"name": c["name"], "image": c.get("image", ""), "imageID": "",
                         "ready": self.states.get(c["name"], {}).get("ready", False),
                         "started": "running" in self.states.get(c["name"], {}).get("state", {}),
                         "restartCount": self.states.get(c["name"], {}).get("restarts", 0),
                         "state": self.states.get(c["name"], {}).get(
                             "state", {"waiting": {"reason": "PodInitializing"}})}
                        for c in self.pod["spec"]["containers"]]
        ready = phase == "Running" and all(s["ready"] for s in statuses)
        self.write_status(phase, statuses, ready)

    def fail_pull(self, message):
        statuses = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False,
                     "restartCount": 0,
                     "state": {"waiting": {"reason": "ErrImagePull", "message": message}}}
                    for c in self.pod["spec"]["containers"]]
        self.write_status("Pending", statuses, False)

    def write_status(self, phase, statuses, ready):
        stamp = now()
        conditions = [{"type": t, "status": "True" if ok else "False",
                       "lastTransitionTime": stamp}
                      for t, ok in (("PodScheduled", True), ("Initialized", self.init_done),
                                    ("ContainersReady", ready), ("Ready", ready))]
        for _ in range(5):
            pod = self.kubelet.kube.get("Pod", *self.key)
            if pod is None or pod["metadata"]["uid"] != self.uid or self.deleted.is_set():
                return
            pod["status"] = {"phase": phase, "podIP": self.ip, "podIPs": [{"ip": self.ip}],
                             "hostIP": GATEWAY, "startTime": pod.get("status", {}).get(
                                 "startTime", stamp),
                             "conditions": conditions, "containerStatuses": statuses}
            try:
                self.kubelet.kube.update_status("Pod", pod)
                self.kubelet.seen[self.key] = pod
                return
            except ApiError as e:
                if e.status not in (404, 409):
                    raise
                if e.status == 404:
                    return

    # --- deletion ---

    def stop(self, grace):
        """SIGTERM to every container, SIGKILL after the grace period; then the namespace goes."""
        self.deleted.set()
        live = [p for p in self.procs.values() if p.poll() is None]
        for p in live:
            os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in live:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if self.netns:
            PodNet.remove(self.netns)
        # The Pod's directory (its /tmp holds Ray's session logs) stays for the run's work dir.


# Run in the container's own mount namespace ($0 is the Pod's directory, "$@" the command): the
# Pod's directory at /mnt, its /tmp, resolv.conf and hosts; mount_at puts a volume at its path.
# A path that does not exist is made on a copy of its nearest existing ancestor bound over that
# ancestor (outside /tmp), so nothing of this machine is changed.
MOUNT_SCRIPT = r'''set -e
mount --bind "$0" /mnt
for keep in $KEEP; do
  mkdir -p "/mnt$keep"
  mount --bind "$keep" "/mnt$keep"
done
mount --rbind /mnt/tmp /tmp
mount --bind /mnt/resolv.conf /etc/resolv.conf
mount --bind /mnt/hosts /etc/hosts
shadowed=" "
# One shadow per container run: containers of a Pod start together and would race copying the
# same parent directory (cp's create fails with "File exists").
shadow=/mnt/shadow/$$
make_path() {
  [ -e "$1" ] && return 0
  parent=$(dirname "$1")
  while [ ! -d "$parent" ]; do parent=$(dirname "$parent"); done
  case "$parent" in
    /) echo "stand-in: cannot make $1 under /" >&2; exit 1 ;;
    /tmp|/tmp/*) ;;
    *) case "$shadowed" in *" $parent "*) ;; *)
         mkdir -p "$shadow$parent"
         cp -a "$parent"/. "$shadow$parent"/
         mount --bind "$shadow$parent" "$parent"
         shadowed="$shadowed$parent " ;;
       esac ;;
  esac
  if [ "$2" = dir ]; then mkdir -p "$1"; else mkdir -p "$(dirname "$1")"; touch "$1"; fi
}
mount_at() {
  if [ -d "$1" ]; then make_path "$2" dir; else make_path "$2" file; fi
  mount --bind "$1" "$2"
}
'''


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def terminated(code):
    return {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                           "startedAt": now(), "finishedAt": now()}}


class Kubelet(threading.Thread):
    """The Node and its Pods: binds every unbound Pod to the Node, runs it (StandinPod), stops
    it gracefully when it is deleted, and answers ServiceDns from the Pods it last listed."""

    def __init__(self, kube, venv, work):
        super().__init__(daemon=True)
        self.kube, self.venv, self.work = kube, venv, work
        # Host paths under /tmp that containers must still see through their Pod's own /tmp
        # (a checkout under /tmp puts the Ray virtualenv there).
        self.keep = [venv]
        self.logs = os.path.join(work, "pod-logs")
        os.makedirs(self.logs, exist_ok=True)
        self.net = PodNet()
        self.pods = {}  # (ns, name) -> StandinPod
        self.seen = {}  # (ns, name) -> the Pod as last listed or written
        self.errors = []
        self.timeline = collections.deque(maxlen=200)  # when each container became ready
        self.stopping = threading.Event()
        self.dns = None

    def error(self, message):
        """Kept for the run's summary and written at once to standin-errors.log in the work dir
        (a run that is killed still leaves it)."""
        line = f"{time.strftime('%H:%M:%S')} {message}"
        self.errors.append(line)
        with open(os.path.join(self.work, "standin-errors.log"), "a") as f:
            f.write(line + "\n")

    def note(self, message):
        """A line of the Pods' timeline, printed when a run fails."""
        self.timeline.append(f"{time.strftime('%H:%M:%S')} {message}")

    def start(self):
        leftovers = self.net.up()
        if leftovers:
            print(f"standin: cleared {len(leftovers)} Pod network name(s) a run that never "
                  f"stopped left: {' '.join(leftovers[:10])}", file=sys.stderr)
        self.register_node()
        self.dns = ServiceDns(self)
        self.dns.start()
        super().start()
        return self

    def register_node(self):
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}}
        try:
            self.kube.create("Node", node)
        except ApiError as e:
            if e.status != 409:
                raise
        node = self.kube.get("Node", None, NODE)
        capacity = {"cpu": "64", "memory": "256Gi", "pods": "1000"}
        node["status"] = {"capacity": capacity, "allocatable": capacity,
                          "addresses": [{"type": "InternalIP", "address": GATEWAY}],
                          "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                          "lastHeartbeatTime": now(), "lastTransitionTime": now()}]}
        self.kube.request("PUT", f"/api/v1/nodes/{NODE}/status", node)

    def run(self):
        while not self.stopping.is_set():
            try:
                listed = {(p["metadata"]["namespace"], p["metadata"]["name"]): p
                          for p in self.kube.list("Pod")}
                self.seen = dict(listed)
                for key, pod in listed.items():
                    self.sync(key, pod)
                for key in [k for k in self.pods if k not in listed]:
                    self.pods.pop(key).stop(0)
            except Exception as e:  # noqa: BLE001 - the API server may be restarting
                self.error(f"sync: {e}")
            self.stopping.wait(0.25)

    def sync(self, key, pod):
        m, known = pod["metadata"], self.pods.get(key)
        if known and known.uid != m["uid"]:
            self.pods.pop(key).stop(0)
            known = None
        if m.get("deletionTimestamp"):
            if known:
                self.pods.pop(key)
                threading.Thread(target=self.finish_deletion, args=(known, pod),
                                 daemon=True).start()
            elif pod["spec"].get("nodeName") == NODE and key not in self.pods:
                self.kube.delete("Pod", *key, grace=0)
            return
        if not pod["spec"].get("nodeName"):
            self.bind(key, m["uid"])
            return
        if known is None and pod.get("status", {}).get("phase", "Pending") == "Pending":
            self.pods[key] = StandinPod(self, pod).start()

    def bind(self, key, uid):
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": key[1], "uid": uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}}
        try:
            self.kube.request("POST", f"/api/v1/namespaces/{key[0]}/pods/{key[1]}/binding", body)
        except ApiError as e:
            if e.status not in (404, 409):
                raise

    def finish_deletion(self, pod, seen):
        grace = seen["metadata"].get("deletionGracePeriodSeconds", 30)
        pod.stop(min(grace, 30))
        self.kube.delete("Pod", *pod.key, grace=0)

    def data_of(self, kind, ns, ref, name_field="name", optional_ok=False):
        obj = self.kube.get(kind, ns, ref.get(name_field, ""))
        if obj is None:
            if ref.get("optional") or optional_ok:
                return {}
            raise RuntimeError(f"{kind} {ns}/{ref.get(name_field)} not found")
        data = dict(obj.get("data", {}))
        if kind == "Secret":
            data = {k: base64.b64decode(v) for k, v in data.items()}
        data.update({k: base64.b64decode(v) for k, v in obj.get("binaryData", {}).items()})
        data.update(obj.get("stringData", {}))
        return data

    def service_ips(self, ns, name):
        svc = self.kube.get("Service", ns, name)
        if svc is None or not svc["spec"].get("selector"):
            return []
        selector = svc["spec"]["selector"]
        any_ready = svc["spec"].get("publishNotReadyAddresses", False)
        return [p["status"]["podIP"] for (pns, _), p in sorted(self.seen.items())
                if pns == ns and p.get("status", {}).get("podIP") and
                all(p["metadata"].get("labels", {}).get(k) == v for k, v in selector.items()) and
                (any_ready or pod_ready(p)) and not p["metadata"].get("deletionTimestamp")]

    def hostname_ips(self, ns, subdomain, hostname):
        return [p["status"]["podIP"] for (pns, _), p in self.seen.items()
                if pns == ns and p["spec"].get("subdomain") == subdomain and
                p["spec"].get("hostname") == hostname and p.get("status", {}).get("podIP")]

    def stop(self):
        self.stopping.set()
        self.join(10)
        for pod in self.pods.values():
            pod.stop(0)
        if self.dns:
            self.dns.stop()
        self.net.down()


def pod_ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in pod.get("status", {}).get("conditions", []))
