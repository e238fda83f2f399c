"""e2e tier: the harness's own promises, which every e2e verdict rests on. Usage:
harness_test.py REPO_ROOT

A Ray head whose `ray start` exits (here: its dashboard port taken, as a CI run once met) is
reported at once with Ray's own reason and replaced by a head on another port, not waited on for
minutes; the ports the harness hands out are outside the kernel's ephemeral range, where no
outgoing connection or bind(0) can take them between the choice and the bind."""

import os
import socket
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

ROOT = sys.argv[1]
CACHE = os.environ.get("CONTROL_PLANE_CACHE", os.path.join(ROOT, ".cache/control-plane"))


def ephemeral_range():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = f.read().split()
    return int(low), int(high)


class HarnessTest(unittest.TestCase):
    def test_ports_are_outside_the_ephemeral_range_and_never_handed_out_twice(self):
        low, _ = ephemeral_range()
        ports = [harness.free_port() for _ in range(200)]
        self.assertEqual(len(set(ports)), len(ports))
        self.assertLess(max(ports), low)
        worker_low, worker_high = harness.ray_worker_ports()
        self.assertLess(worker_high, low)
        self.assertTrue(all(not worker_low <= p <= worker_high for p in ports))
        # Ray's own default worker ports, which a Pod's `ray start` refuses to share.
        self.assertTrue(all(not 10002 <= p <= 19999 for p in ports))

    def test_a_head_whose_ray_start_exits_is_replaced_at_once(self):
        logs = tempfile.mkdtemp(prefix="rjharness")
        head = harness.RayHead(os.path.join(CACHE, "ray-venv"), logs)
        taken = head.dashboard_port
        squatter = socket.create_server(("127.0.0.1", taken))
        started = time.monotonic()
        try:
            head.start(attempts=2)
            self.assertNotEqual(head.dashboard_port, taken)
            self.assertEqual(head.request("GET", "/api/version")[0], 200)
            self.assertIn("already occupied", head.proc.log())
            # Two heads started in about a minute, not one timeout of three.
            self.assertLess(time.monotonic() - started, 150)
        finally:
            squatter.close()
            head.stop()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
