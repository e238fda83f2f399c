"""`down`: what the cluster leaves on the host, found and removed, in an order that works after a
crash too (a SIGKILLed kubelet or containerd leaves shims and containers running, and mounts).

Containers are stopped through their cgroups, not through containerd, so a dead containerd does
not keep them alive. Images in containerd's store, the pki and the built binaries stay.
"""
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import time

from nodeconfig import CNI_NETWORK, NODE_LINK, POD_BRIDGE, SYSCTLS

# Sysctls the kubelet itself rewrites, restored with the ones the cluster sets.
KUBELET_SYSCTLS = ["kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory"]
# Fixed host paths the kubelet and the CNI library write whatever their settings; `down` removes
# each one `up` created (and, where one was there before, only this cluster's entries).
FIXED_PATHS = ["/var/lib/kubelet", "/var/log/containers", "/var/lib/cni"]
STOP_ORDER = ["local-path-provisioner", "coredns", "kube-proxy", "kubelet", "kube-scheduler",
              "kube-controller-manager", "containerd", "kube-apiserver", "etcd"]
CGROUP_ROOT = "/sys/fs/cgroup"


def sh(argv, check=False):
    return subprocess.run(argv, check=check, capture_output=True, text=True)


def stop_process(pid, timeout=10):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not os.path.exists(f"/proc/{pid}") or _zombie(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] == "Z"
    except OSError:
        return True


def kubepods_cgroups():
    """Every cgroup directory of the kubelet's pods, deepest first."""
    found = []
    for controller in glob.glob(f"{CGROUP_ROOT}/*/kubepods") + glob.glob(f"{CGROUP_ROOT}/kubepods"):
        for dirpath, _, _ in os.walk(controller):
            found.append(dirpath)
    return sorted(set(found), key=lambda p: p.count("/"), reverse=True)


def kill_pod_processes():
    for _ in range(20):
        pids = set()
        for cg in kubepods_cgroups():
            try:
                with open(os.path.join(cg, "cgroup.procs")) as f:
                    pids.update(int(p) for p in f.read().split())
            except OSError:
                pass
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def our_processes(node):
    """Pids of processes this cluster started: its binaries, containerd with its config and the
    shims serving its containerd."""
    ours = []
    bin_dir = os.path.join(node.cache, "bin")
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            exe = os.readlink(f"/proc/{entry}/exe")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
        except OSError:
            continue
        if (exe.startswith(bin_dir + "/") or node.containerd_config in cmdline or
                ("containerd-shim" in exe and node.containerd_socket in cmdline)):
            if not _zombie(int(entry)):
                ours.append(int(entry))
    return ours


def our_mounts(node):
    prefixes = tuple(p.rstrip("/") + "/" for p in (node.root, node.run, "/run/netns/cni-",
                                                     "/var/run/netns/cni-"))
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(prefixes) or point in (node.root, node.run):
                mounts.append(point)
    return sorted(set(mounts), key=len, reverse=True)


def unmount_all(node):
    for _ in range(3):
        mounts = our_mounts(node)
        if not mounts:
            return
        for point in mounts:
            if sh(["umount", point]).returncode:
                sh(["umount", "-l", point])


def our_netns():
    return [n.split()[0] for n in sh(["ip", "netns", "list"]).stdout.splitlines()
            if n.startswith("cni-")]


def kube_chains(command, table):
    out = sh([command, "-t", table, "-S"]).stdout.splitlines()
    return out, sorted({line.split()[1] for line in out if line.startswith("-N KUBE-")})


def remove_iptables_chains():
    for command in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle"):
            rules, chains = kube_chains(command, table)
            if not chains:
                continue
            for rule in rules:  # jumps into our chains from the built-in ones
                parts = shlex.split(rule)  # comments are quoted
                if parts[0] == "-A" and not parts[1].startswith("KUBE-") and any(
                        c in parts for c in chains):
                    sh([command, "-t", table, "-D", *parts[1:]])
            for chain in chains:
                sh([command, "-t", table, "-F", chain])
            for chain in chains:
                sh([command, "-t", table, "-X", chain])


def write_sysctls(values):
    """Each value that can be written (a key the kernel lacks is left alone)."""
    for key, value in values.items():
        try:
            with open("/proc/sys/" + key, "w") as f:
                f.write(value)
        except OSError:
            pass


def restore_sysctls(node):
    saved = os.path.join(node.root, "sysctls.json")
    try:
        with open(saved) as f:
            values = json.load(f)
    except OSError:
        return
    write_sysctls(values)
    os.unlink(saved)


def save_host_state(node):
    """Before the first `up`: the host's sysctls that the cluster and the kubelet change, and
    which fixed paths do not exist yet."""
    save_sysctls(node)
    created = os.path.join(node.root, "created-paths.json")
    if not os.path.exists(created):
        with open(created, "w") as f:
            json.dump([p for p in FIXED_PATHS if not os.path.lexists(p)], f)


def created_paths(node):
    try:
        with open(os.path.join(node.root, "created-paths.json")) as f:
            return json.load(f)
    except OSError:
        return []


def save_sysctls(node):
    """The host's values of what the cluster and the kubelet change, once, before `up` does."""
    saved = os.path.join(node.root, "sysctls.json")
    if os.path.exists(saved):
        return
    found = {}
    for key in list(SYSCTLS) + KUBELET_SYSCTLS:
        try:
            with open("/proc/sys/" + key) as f:
                found[key] = f.read().strip()
        except OSError:
            pass
    with open(saved, "w") as f:
        json.dump(found, f)


def remove_state(node):
    for path in (node.run, os.path.join(node.root, "etcd"), node.kubelet_dir, node.volumes,
                 os.path.join(node.root, "pod-logs"), f"/var/lib/cni/networks/{CNI_NETWORK}",
                 os.path.join(node.root, "kubelet-pki")):
        shutil.rmtree(path, ignore_errors=True)
    for link in glob.glob("/var/log/containers/*.log"):
        if os.readlink(link).startswith(os.path.join(node.root, "pod-logs")):
            os.unlink(link)
    for path in ["/var/lib/kubelet/device-plugins/kubelet.sock"] + glob.glob(
            f"/var/lib/cni/results/{CNI_NETWORK}-*"):
        if os.path.lexists(path):
            os.unlink(path)
    for path in created_paths(node):
        shutil.rmtree(path, ignore_errors=True)


def teardown(node, procs, log):
    started = time.monotonic()
    for name in STOP_ORDER[:4]:
        pid = procs.pid(name)
        if pid:
            stop_process(pid)
    kill_pod_processes()
    for name in STOP_ORDER[4:]:
        pid = procs.pid(name)
        if pid:
            stop_process(pid)
    for pid in our_processes(node):
        stop_process(pid, timeout=2)
    unmount_all(node)
    for ns in our_netns():
        sh(["ip", "netns", "delete", ns])
    for link in (POD_BRIDGE, NODE_LINK):
        sh(["ip", "link", "delete", link])
    remove_iptables_chains()
    for cg in kubepods_cgroups():
        try:
            os.rmdir(cg)
        except OSError:
            pass
    restore_sysctls(node)
    remove_state(node)
    left = leftovers(node)
    for line in left:
        log(f"left behind: {line}")
    if not any(line.startswith("path ") for line in left):
        try:
            os.unlink(os.path.join(node.root, "created-paths.json"))
        except OSError:
            pass
    log(f"down in {time.monotonic() - started:.1f} s" + (" (with leftovers)" if left else ""))


def leftovers(node):
    found = [f"process {pid}: {open(f'/proc/{pid}/cmdline').read().replace(chr(0), ' ')[:120]}"
             for pid in our_processes(node)]
    found += [f"mount {m}" for m in our_mounts(node)]
    found += [f"network namespace {n}" for n in our_netns()]
    found += [f"link {link}" for link in (POD_BRIDGE, NODE_LINK)
              if sh(["ip", "link", "show", link]).returncode == 0]
    for command in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle"):
            found += [f"{command} -t {table} chain {c}" for c in kube_chains(command, table)[1]]
    found += [f"cgroup {cg}" for cg in kubepods_cgroups()]
    found += [f"path {p} (made by the cluster)" for p in created_paths(node) if os.path.lexists(p)]
    if os.path.exists(os.path.join(node.root, "sysctls.json")):
        found.append("sysctls not restored (" + os.path.join(node.root, "sysctls.json") + ")")
    return found
