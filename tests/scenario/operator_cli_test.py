"""The operator's command line against bad input: a missing or malformed kubeconfig, an
unreachable API server. Each must fail fast with an exit code and a message naming the cause.
Usage: operator_cli_test.py OPERATOR"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

OPERATOR = sys.argv[1]


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kubeconfig_for(port):
    """A kubeconfig for an API server on 127.0.0.1:port (token auth, TLS unverified)."""
    return f"""apiVersion: v1
kind: Config
current-context: c
clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:{port}", insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
"""


class OperatorCli(unittest.TestCase):
    def run_operator(self, *args):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([OPERATOR, f"--journal-dir={d}/journal", *args],
                               capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def test_help_lists_the_real_cluster_flags(self):
        code, out = self.run_operator("--help")
        self.assertEqual(code, 0)
        for flag in ["--kubeconfig", "--leader-elect", "--kube-api-qps", "--ray-dashboard-address"]:
            self.assertIn(flag, out)

    def test_usage_errors_exit_2_naming_the_flag(self):
        for args, named in [(["--no-such-flag"], "--no-such-flag"),
                            (["--workers=abc"], "--workers"),
                            (["--requeue-ms=0"], "--requeue-ms"),
                            (["--requeue-ms=-5"], "--requeue-ms"),
                            (["--checkpoint-every=0"], "--checkpoint-every"),
                            (["--kube-api-timeout-ms=0"], "--kube-api-timeout-ms"),
                            (["--leader-elect-retry-period=0"], "--leader-elect-retry-period"),
                            (["--exit-when-idle", "--timeout=-1"], "--timeout")]:
            code, out = self.run_operator(*args)
            self.assertEqual(code, 2, (args, out))
            self.assertIn(named, out, args)

    def test_manifests_that_cannot_be_applied_are_errors_naming_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "fifo.yaml")
            os.mkfifo(fifo)
            links = os.path.join(d, "links")
            os.mkdir(links)
            os.symlink(os.path.join(d, "gone.yaml"), os.path.join(links, "dangling.yaml"))
            big = os.path.join(d, "big.yaml")
            with open(big, "w") as f:
                f.write("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: big}\n"
                        "spec: {entrypoint: '" + "x" * (4 << 20) + "'}\n")
            broken = os.path.join(d, "broken.yaml")
            with open(broken, "w") as f:
                f.write("kind: RayJob\nmetadata: [unclosed\n")
            for path, cause in [(fifo, "not a regular file"),
                                (links, "dangling.yaml: cannot read it"),
                                (os.path.join(d, "none.yaml"), "no such file"),
                                (big, "larger than 3 MiB"),
                                (broken, "broken.yaml")]:
                code, out = self.run_operator(f"--apply={path}", "--exit-when-idle",
                                              f"--cluster-dir={d}/cluster-{len(cause)}")
                self.assertEqual(code, 2, (path, out))
                self.assertIn(cause, out, path)

    def test_manifests_an_api_server_would_refuse(self):
        with tempfile.TemporaryDirectory() as d:
            sample = open(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "samples",
                                       "rayjob-success.yaml")).read()
            for name, (old, new, cause) in {
                    "version": ("apiVersion: ray.io/v1", "apiVersion: ray.io/v9", "apiVersion 'ray.io/v9' is not served"),
                    "namespace": ("name: rayjob-success", "name: rayjob-success\n  namespace: Bad_NS", "namespace 'Bad_NS' is not a DNS-1123 label"),
                    "duration": ('sim-duration: "1s"', 'sim-duration: "soon"', "'soon' is not a duration")}.items():
                path = os.path.join(d, name + ".yaml")
                with open(path, "w") as f:
                    f.write(sample.replace(old, new, 1))
                code, out = self.run_operator(f"--apply={path}", "--exit-when-idle",
                                              f"--cluster-dir={d}/cluster-{name}")
                self.assertEqual(code, 2, (name, out))
                self.assertIn(cause, out, name)
                self.assertIn(path, out, name)

    def test_wrongly_typed_fields_end_in_validation_failed(self):
        # Not refused at --apply (an API server without our CRD schema would take them too):
        # each RayJob gets a ValidationFailed status naming the field, and the run comes to rest.
        with tempfile.TemporaryDirectory() as d:
            sample = open(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "samples",
                                       "rayjob-success.yaml")).read()
            path = os.path.join(d, "typed.yaml")
            with open(path, "w") as f:
                for i, value in enumerate(['"three"', "2147483648", "1.5"]):
                    f.write(sample.replace("name: rayjob-success", f"name: typed-{i}", 1)
                            .replace("\nspec:\n", f"\nspec:\n  backoffLimit: {value}\n", 1) + "\n---\n")
            summary = os.path.join(d, "summary.json")
            code, out = self.run_operator(f"--apply={path}", "--exit-when-idle", "--timeout=60",
                                          f"--cluster-dir={d}/cluster", f"--summary-json={summary}")
            self.assertEqual(code, 0, out[-2000:])
            jobs = {j["name"]: j for j in json.load(open(summary))}
            self.assertEqual(len(jobs), 3, jobs)
            for name, job in jobs.items():
                self.assertEqual(job["jobDeploymentStatus"], "ValidationFailed", job)
                self.assertIn("spec.backoffLimit: must be an int32 integer", job["message"])
            self.assertIn("InvalidRayJobSpec", out)  # the Warning Event

    def test_yaml_bombs_are_refused_quickly(self):
        levels = ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
        for i in range(1, 9):
            prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
            levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
        bombs = {"aliases": ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: bomb}\nspec:\n"
                             + "\n".join("  " + l for l in levels) + "\n", "excessive aliasing"),
                 "nesting": ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: deep}\nspec: "
                             + "[" * 150 + "]" * 150 + "\n", "nested deeper than 100")}
        with tempfile.TemporaryDirectory() as d:
            for name, (text, cause) in bombs.items():
                path = os.path.join(d, name + ".yaml")
                with open(path, "w") as f:
                    f.write(text)
                started = time.time()
                code, out = self.run_operator(f"--apply={path}", "--exit-when-idle",
                                              f"--cluster-dir={d}/cluster-{name}")
                self.assertEqual(code, 2, (name, out[-2000:]))
                self.assertIn(path, out)
                self.assertIn(cause, out)
                self.assertLess(time.time() - started, 30, name)

    def test_two_operators_on_one_cluster_directory(self):
        with tempfile.TemporaryDirectory() as d:
            first = subprocess.Popen([OPERATOR, f"--journal-dir={d}/j1", f"--cluster-dir={d}/cluster"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                deadline = time.time() + 20
                while not os.path.exists(f"{d}/cluster/LOCK") and time.time() < deadline:
                    time.sleep(0.05)
                code, out = self.run_operator(f"--cluster-dir={d}/cluster", "--exit-when-idle")
                self.assertEqual(code, 2, out)
                self.assertIn(f"cluster directory {d}/cluster is used by another operator (pid {first.pid})", out)
            finally:
                first.terminate()
                first.wait(timeout=20)

    def test_startup_log_names_the_allocator(self):
        # The build links jemalloc unless a sanitizer brings its own allocator (CMake passes
        # which one this build has); a link that silently dropped it would show here.
        expected = os.environ.get("RAYJOURNAL_EXPECT_ALLOCATOR", "jemalloc")
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([OPERATOR, f"--journal-dir={d}/j", f"--cluster-dir={d}/c",
                                  "--metrics-bind-address=0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                first = p.stdout.readline()
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=20)
            finally:
                if p.poll() is None:
                    p.kill()
        self.assertIn(f"allocator: {expected}", first)

    def test_sigterm_with_idle_status_connections_is_prompt(self):
        # Idle TCP connections to /metrics (a stuck scrape, a port scan) must not hold up a
        # shutdown: it ends in well under a second, as without them.
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([OPERATOR, f"--journal-dir={d}/j", f"--cluster-dir={d}/c",
                                  "--metrics-bind-address=127.0.0.1:0", "--log-level=info"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                port = None
                for line in p.stdout:
                    m = re.search(r"on port (\d+)", line)
                    if m:
                        port = int(m.group(1))
                        break
                self.assertIsNotNone(port, "no status server port in the log")
                idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
                # Connections are accepted in order: once a later probe answers, all are open.
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                    self.assertEqual(r.status, 200)
                began = time.time()
                p.send_signal(signal.SIGTERM)
                code = p.wait(timeout=20)
                self.assertLess(time.time() - began, 2.0)
                self.assertEqual(code, 0)
                for s in idle:
                    s.close()
            finally:
                if p.poll() is None:
                    p.kill()

    def test_sigterm_while_the_api_server_hangs(self):
        # An API server that accepts connections and never answers: start-up says what it is
        # waiting for every few seconds, and SIGTERM ends it at once (not the kubelet's SIGKILL).
        hang = socket.socket()
        hang.bind(("127.0.0.1", 0))
        hang.listen(16)
        port = hang.getsockname()[1]
        with tempfile.TemporaryDirectory() as d:
            config = f"{d}/kubeconfig"
            with open(config, "w") as f:
                f.write(kubeconfig_for(port))
            p = subprocess.Popen([OPERATOR, f"--journal-dir={d}/j", f"--kubeconfig={config}",
                                  "--kube-api-timeout-ms=120000", "--log-level=info",
                                  "--metrics-bind-address=0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                lines = []
                for line in p.stdout:  # the first "still" line comes after 5 s
                    lines.append(line)
                    if "start-up: still connecting to the Kubernetes API server" in line:
                        break
                self.assertIn("still connecting", "".join(lines))
                began = time.time()
                p.send_signal(signal.SIGTERM)
                code = p.wait(timeout=20)
                rest = p.stdout.read()
                self.assertLess(time.time() - began, 2.0)
                self.assertEqual(code, 0, rest)
                self.assertIn("signal 15 during start-up while connecting", rest)
            finally:
                if p.poll() is None:
                    p.kill()
                hang.close()

    def test_journal_directory_it_cannot_write(self):
        # Named as what it is, not as "locked by another process" (RocksDB's LOCK file is the
        # first thing it fails to open). Root ignores file modes, so root runs it as nobody.
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o755)
            p = subprocess.run([OPERATOR, f"--journal-dir={d}/j", f"--cluster-dir={d}/c",
                                "--exit-when-idle"], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            subprocess.run(["chmod", "-R", "a-w", f"{d}/j"], check=True)
            os.makedirs(f"{d}/c2")
            os.chmod(f"{d}/c2", 0o777)
            as_nobody = (lambda: os.setuid(65534)) if os.geteuid() == 0 else None
            p = subprocess.run([OPERATOR, f"--journal-dir={d}/j", f"--cluster-dir={d}/c2",
                                "--exit-when-idle"], capture_output=True, text=True, timeout=60,
                               preexec_fn=as_nobody)
            out = p.stdout + p.stderr
            self.assertEqual(p.returncode, 3, out[-2000:])
            self.assertIn(f"journal {d}/j cannot be written", out)
            self.assertNotIn("locked by another process", out)
            subprocess.run(["chmod", "-R", "u+w", f"{d}/j"], check=True)

    def test_missing_kubeconfig(self):
        code, out = self.run_operator("--kubeconfig=/nonexistent/config")
        self.assertEqual(code, 2)
        self.assertIn("cannot read kubeconfig /nonexistent/config", out)

    def test_kubeconfig_without_the_context(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: gone\ncontexts: []\n")
        try:
            code, out = self.run_operator(f"--kubeconfig={f.name}")
        finally:
            os.unlink(f.name)
        self.assertEqual(code, 2)
        self.assertIn("no context named 'gone'", out)

    def test_kubeconfig_server_that_is_not_a_url(self):
        for server, why in [("not a url", "no https://"), ("https://", "no host"),
                            ("https://h:99999", "not 1-65535"), ("https://h:x", "not 1-65535")]:
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                f.write(f"""apiVersion: v1
kind: Config
current-context: c
clusters: [{{name: c, cluster: {{server: "{server}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
""")
            try:
                code, out = self.run_operator(f"--kubeconfig={f.name}")
            finally:
                os.unlink(f.name)
            self.assertEqual(code, 2, (server, out))
            self.assertIn(f"cluster server '{server}' is not a URL", out)
            self.assertIn(why, out)

    def test_unreachable_api_server(self):
        port = closed_port()
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(kubeconfig_for(port))
        try:
            code, out = self.run_operator(f"--kubeconfig={f.name}", "--kube-api-timeout-ms=2000")
        finally:
            os.unlink(f.name)
        self.assertEqual(code, 5)
        self.assertIn(f"https://127.0.0.1:{port}", out)
        self.assertIn("Connection refused", out)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
