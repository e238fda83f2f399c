"""The stand-in's Pod networks when names of an earlier run are left on the machine (CI's
kuberay_e2e.subset failed when rjp2..rjp6 existed before the run: the first RayCluster's head Pod
never got a network and the cluster never became ready). Needs root; exits 77 without it."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin import PodNet, sh  # noqa: E402


def namespaces():
    return [ns for ns in sh("ip", "netns", "list").stdout.split() if ns.startswith("rjp")]


def leave_namespace(ns, host):
    """A namespace with its veth, as a run that never stopped leaves it."""
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)


class PodNetTest(unittest.TestCase):
    def setUp(self):
        PodNet().down()
        self.net = PodNet()

    def tearDown(self):
        self.net.down()
        self.assertEqual(namespaces(), [])
        self.assertEqual(PodNet.links_named("rjv"), [])

    def test_names_a_run_that_never_stopped_left_are_cleared_when_the_network_comes_up(self):
        for n in range(2, 7):
            leave_namespace(f"rjp{n}", f"rjv{n}")
        cleared = self.net.up()
        self.assertEqual(sorted(cleared), sorted([f"rjp{n}" for n in range(2, 7)] +
                                                 [f"rjv{n}" for n in range(2, 7)]))
        self.assertEqual(self.net.add(), ("rjp2", "10.244.0.4"))

    def test_a_name_taken_after_the_network_came_up_is_passed_over(self):
        self.net.up()
        leave_namespace("rjp2", "rjv2")
        sh("ip", "netns", "add", "rjp3")
        sh("ip", "link", "add", "rjv4", "type", "veth", "peer", "name", "rjx4")
        ns, ip = self.net.add()
        self.assertEqual((ns, ip), ("rjp5", "10.244.0.7"))
        self.assertIn(f"inet {ip}/16", sh("ip", "-n", ns, "addr", "show", "eth0").stdout)


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("standin_test: needs root (network namespaces); skipped", file=sys.stderr)
        sys.exit(77)
    unittest.main()
