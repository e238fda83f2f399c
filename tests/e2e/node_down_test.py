"""e2e tier: `scripts/cluster.sh down` leaves nothing of the real node behind: no process of its
own, no mount under its directories, no pod network namespace, no link, no KUBE-* iptables
chain, no kubepods cgroup, and the sysctls it (and the kubelet) changed are back to the values
found before `up`. Runs last in the tier (the cluster's cleanup); brings the cluster up first if
it is not, with a Pod running, so that there is something to remove. Usage: node_down_test.py ROOT
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeclient  # noqa: E402

ROOT = sys.argv[1]
NODE_ROOT = os.environ.get("NODE_ROOT", "/var/lib/rayjournal-node")


def cluster(*args, check=True):
    return nodeclient.cluster(ROOT, *args, check=check)


def kubectl(kubeconfig, *args):
    return subprocess.run([os.path.join(ROOT, ".cache/control-plane/bin/kubectl"),
                           f"--kubeconfig={kubeconfig}", *args],
                          check=True, capture_output=True, text=True).stdout


class DownTest(unittest.TestCase):
    def test_down_leaves_nothing_behind(self):
        kubeconfig = nodeclient.kubeconfig(cluster("up"))
        kubectl(kubeconfig, "run", "left-running", "--image=localhost/rayjournal/node-helper:bookworm",
                "--image-pull-policy=Never", "--restart=Never", "--", "sleep", "3600")
        kubectl(kubeconfig, "wait", "--for=condition=Ready", "pod/left-running", "--timeout=120s")
        with open(os.path.join(NODE_ROOT, "sysctls.json")) as f:
            before_up = json.load(f)
        self.assertTrue(cluster("leftovers", check=False).stdout, "a running cluster has parts")
        down = cluster("down")
        self.assertNotIn("left behind", down.stderr)
        left = cluster("leftovers", check=False)
        self.assertEqual((left.returncode, left.stdout), (0, ""), left.stdout)
        for key, value in before_up.items():
            with open("/proc/sys/" + key) as f:
                self.assertEqual(f.read().strip(), value, key)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
