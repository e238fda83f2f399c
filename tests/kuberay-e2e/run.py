"""KubeRay's own e2e suites (ray-operator/test/<package>, compiled unchanged by build.sh) against
an operator, on the real node (--node: scripts/cluster.sh, the operator deployed in it) or, for
e2erayjob only, on the e2e control plane and the kubelet stand-in (standin.py).

  run.py --operator rayjournal|kuberay [--node] [--package P] [--run REGEX]
         [--also PACKAGE=REGEX ...] [--parallel N] [--json FILE] [--markdown FILE]

Starts the stage once (stage.py: on the node, KubeRay's test images loaded, the test-only
requests policy applied, the operator installed; on the stand-in, the control plane, the
stand-in and the operator), then each test binary as KubeRay's CI runs it (KUBECONFIG,
KUBERAY_TEST_OUTPUT_DIR, KUBERAY_TEST_RAY_IMAGE on the node, and KubeRay's own timeout knob
KUBERAY_TEST_TIMEOUT_SHORT, 2m here: see --timeout-short), and writes one row per case: pass,
fail or skip, seconds, the first failure line. Exit 0 when no case failed. Needs root."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stage import (CACHE, KUBERAY_VERSION, OPERATORS, NodeStage, Stage, head_commit,  # noqa: E402
                   report)

# KubeRay's e2e packages tests/kuberay-e2e/build.sh compiles.
PACKAGES = ("e2erayjob", "e2erayjobsubmitter", "sampleyaml", "e2eautoscaler", "e2e")
import harness  # noqa: E402  (stage.py put tests/e2e on the path)

RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)")
# A failed assertion's first line: in a test file, or in KubeRay's resource logger (its Gomega
# fail handler, which sampleyaml and the RayCluster suites configure).
FAILURE = re.compile(r"^\s+(\S+_test|resource_logger)\.go:\d+:")


def parse(output):
    """Rows {case, result, seconds, failure} in the order the cases ended; failure: the first
    failed assertion logged under a failing case (its file:line and its first lines)."""
    rows, first_failure, current, taking, aborted, not_run = [], {}, None, None, {}, []
    for line in output.splitlines():
        run = re.match(r"^=== (RUN|CONT|NAME)\s+(\S+)", line)
        if run:
            if taking:
                first_failure.setdefault(current, " ".join(taking)[:300])
            current, taking = run.group(2), None
            continue
        if taking is not None:
            if line.startswith("        ") and len(taking) < 5:
                taking.append(line.strip())
                continue
            first_failure.setdefault(current, " ".join(taking)[:300])
            taking = None
        if "subtest may have called FailNow on a parent test" in line and "/" in (current or ""):
            # KubeRay's subtests assert with the parent's T: the failure ends the whole Test,
            # and its later cases never run (a row says so instead of the table shrinking).
            aborted[current.split("/")[0]] = current
        if current and FAILURE.match(line) and not re.search(r"\[\d{4}-\d\d-\d\dT", line):
            taking = [line.strip()]
            continue
        m = RESULT.match(line)
        if m:
            result, case, seconds = m.groups()
            failure = first_failure.get(case) or next(
                (v for k, v in first_failure.items() if case.startswith(k + "/") or
                 k.startswith(case + "/")), "")
            rows.append({"case": case, "result": result.lower(), "seconds": float(seconds),
                         "failure": failure if result == "FAIL" else ""})
            if case in aborted:
                not_run.append({"case": f"{case}/(any case after {aborted[case].split('/', 1)[1]})",
                             "result": "not run", "seconds": 0.0,
                             "failure": f"the failure of {aborted[case]} ended {case}: a case "
                                        "after it, if any, did not run"})
    for row in not_run:  # after the Test's own cases (Go prints the parent's result first)
        parent = row["case"].split("/")[0] + "/"
        at = max((i for i, r in enumerate(rows) if r["case"].startswith(parent)), default=len(rows))
        rows.insert(at + 1, row)
    return rows


def case_lines(output, cases):
    """The lines go test printed under the named cases or their parents (KubeRay's cases log
    through their parent's T)."""
    out, current = [], None
    for line in output.splitlines():
        started = re.match(r"^=== (?:RUN|CONT|NAME|PAUSE)\s+(\S+)", line)
        if started:
            current = started.group(1)
        elif current and any(c == current or c.startswith(current + "/") for c in cases):
            out.append(line.strip())
    return out


def markdown(rows, meta):
    out = [f"{meta['operator']} · {meta.get('package', 'e2erayjob')} · {meta['date']} · "
           f"commit {meta['commit']} · "
           f"{meta['passed']} passed, {meta['failed']} failed, {meta['skipped']} skipped "
           f"of {meta['passed'] + meta['failed'] + meta['skipped']}"
           f"{' (some not run: see the rows)' if meta['not_run'] else ''} · "
           f"{meta['seconds']:.0f} s · KUBERAY_TEST_TIMEOUT_SHORT={meta['timeout_short']}",
           "", "| case | result | s | first failure |",
           "|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['case']} | {r['result']} | {r['seconds']:.0f} | "
                   f"{r['failure'].replace('|', '/')} |")
    return "\n".join(out) + "\n"


def explain_failure(stage, operator_state, test_output, failing):
    """What a CI log needs when the work directory is gone: the failing cases' own progress
    lines, whether the operator was still running, its last decisions and warnings, and the
    stand-in's own errors."""
    print(f"run.py: the progress lines of the failing case(s) {sorted(failing)}:", file=sys.stderr)
    progress = [ln for ln in case_lines(test_output, failing) if ".go:" in ln or "--- " in ln]
    for line in progress[-30:]:
        print(f"  go test: {line[:300]}", file=sys.stderr)
    op = stage.op
    print(f"run.py: the operator was {operator_state} ({stage.operator_starts} start(s))",
          file=sys.stderr)
    if op and os.path.exists(op.log_path):
        lines = [ln for ln in op.log().splitlines() if "[warning]" in ln or "[error]" in ln
                 or "[critical]" in ln]
        for line in lines[-15:]:
            print(f"  operator: {line[:300]}", file=sys.stderr)
        decisions = [ln for ln in op.log().splitlines() if "[info]" in ln]
        for line in decisions[-25:]:
            print(f"  operator decision: {line[:300]}", file=sys.stderr)
        for line in harness.crash_report(op.log()):
            print(f"  operator crash: {line[:300]}", file=sys.stderr)
    timeline = list(stage.kubelet.timeline) if stage.kubelet else []
    for line in timeline[-15:]:
        print(f"  stand-in: {line}", file=sys.stderr)
    errors = stage.kubelet.errors if stage.kubelet else []
    print(f"run.py: the stand-in logged {len(errors)} error(s)", file=sys.stderr)
    for line in errors[:15]:
        print(f"  stand-in: {line[:300]}", file=sys.stderr)


def run_suite(package, regex, args, stage, work):
    """One of KubeRay's test binaries as KubeRay's CI runs it, against the stage's cluster; its
    output is kept in work/go-test-<package>.log."""
    out_dir = os.path.join(work, "kuberay-test-output", package)
    os.makedirs(out_dir)
    env = dict(os.environ, KUBECONFIG=stage.cp.kubeconfig, KUBERAY_TEST_OUTPUT_DIR=out_dir,
               PATH=os.path.join(CACHE, "bin") + os.pathsep + os.environ["PATH"],
               KUBERAY_TEST_TIMEOUT_SHORT=args.timeout_short)
    if args.node:
        env.update(KUBERAY_TEST_RAY_IMAGE=args.ray_image,
                   KUBERAY_TEST_RAY_VERSION=args.ray_image.rsplit(":", 1)[1])
    print(f"run.py: {args.operator} against KubeRay {KUBERAY_VERSION}'s {package} "
          f"on {'the real node' if args.node else 'the kubelet stand-in'} "
          f"(-run {regex}; KUBERAY_TEST_TIMEOUT_SHORT={args.timeout_short}); "
          f"work dir {work}", file=sys.stderr, flush=True)
    binary = test_binary(package, args)
    test = subprocess.run([binary, "-test.v", "-test.run", regex, "-test.timeout", args.timeout,
                           "-test.parallel", str(args.parallel)],
                          env=env, cwd=work, capture_output=True, text=True)
    with open(os.path.join(work, f"go-test-{package}.log"), "w") as f:
        f.write(test.stdout + test.stderr)
    return test


def test_binary(package, args):
    """build.sh's binary of the package, or the one --test-binary names for it."""
    given = dict(b.split("=", 1) for b in args.test_binary)
    return given.get(package) or os.path.join(CACHE, "kuberay-e2e", f"{package}-{KUBERAY_VERSION}.test")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--operator", choices=OPERATORS, default="rayjournal")
    p.add_argument("--rayjournal-operator", help="the operator binary (default: build/bin)")
    p.add_argument("--package", choices=PACKAGES, default="e2erayjob",
                   help="which of KubeRay's e2e packages (build.sh compiles each); all but "
                        "e2erayjob need the real node (--node): they exec into Pods")
    p.add_argument("--run", default=".", help="go test -run pattern (default: every case)")
    p.add_argument("--also", action="append", default=[], metavar="PACKAGE=REGEX",
                   help="then run this package's cases matching REGEX on the same stage "
                        "(repeatable; rows are named 'package: case')")
    p.add_argument("--test-binary", action="append", default=[], metavar="PACKAGE=PATH",
                   help="run this binary for the package instead of build.sh's (one compiled "
                        "unchanged from a KubeRay source tree the module proxy does not serve)")
    p.add_argument("--parallel", type=int, default=2, help="go test -parallel")
    p.add_argument("--timeout", default="90m")
    p.add_argument("--timeout-short", default="2m",
                   help="KUBERAY_TEST_TIMEOUT_SHORT, the suite's own knob for its default wait "
                        "(KubeRay: 1m). Real Ray heads start on the stand-in's 2 shared cores, "
                        "where one cold head start was seen to pass 60 s")
    p.add_argument("--json", help="write the rows and a summary here")
    p.add_argument("--markdown", help="write the table here")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    p.add_argument("--node", action="store_true",
                   help="run on the real node (scripts/cluster.sh) with the operator deployed in "
                        "it, instead of on the kubelet stand-in")
    p.add_argument("--ray-image", default="rayproject/ray:2.60.0",
                   help="KUBERAY_TEST_RAY_IMAGE on the real node (built here: cluster.sh images)")
    p.add_argument("--expect-cases", type=int,
                   help="fail unless exactly this many cases passed (a --run that matches fewer "
                        "cases than meant fails instead of passing quietly)")
    args = p.parse_args()
    if os.geteuid() != 0:
        print("run.py: skipped: the stand-in needs root (network and mount namespaces)",
              file=sys.stderr)
        sys.exit(77)
    suites = [(args.package, args.run)] + [tuple(a.split("=", 1)) for a in args.also]
    for package, _ in suites:
        if package not in PACKAGES:
            p.error(f"unknown package {package!r} (known: {', '.join(PACKAGES)})")
        if package != "e2erayjob" and not args.node:
            p.error(f"package {package} needs --node (the stand-in has no pods/exec)")
        binary = test_binary(package, args)
        if not os.path.exists(binary):
            sys.exit(f"run.py: {binary} is missing: run tests/kuberay-e2e/build.sh")
    work = tempfile.mkdtemp(prefix="rjkr-")
    stage = (NodeStage(args.operator, work) if args.node
             else Stage(args.operator, work, args.rayjournal_operator))
    started = time.monotonic()
    outputs, returncode = [], 0
    try:
        stage.start()
        for package, regex in suites:
            test = run_suite(package, regex, args, stage, work)
            outputs.append((package, test.stdout))
            returncode = returncode or test.returncode
    finally:
        op = stage.op
        operator_state = ("running at the end" if op and op.alive() else
                          f"exited with {op.proc.returncode}" if op and op.proc else "never started")
        stage.stop()
    kubelet = stage.kubelet
    rows = []
    for package, output in outputs:
        for row in parse(output):
            if len(suites) > 1:
                row["case"] = f"{package}: {row['case']}"
            rows.append(row)
    leaves = [r for r in rows if not any(o["case"].startswith(r["case"] + "/") for o in rows)]
    meta = {"operator": args.operator, "kuberay": KUBERAY_VERSION,
            "package": ", ".join(package for package, _ in suites),
            "date": time.strftime("%Y-%m-%d"),
            "commit": head_commit(),
            "timeout_short": args.timeout_short,
            "seconds": time.monotonic() - started,
            "passed": sum(r["result"] == "pass" for r in leaves),
            "failed": sum(r["result"] == "fail" for r in leaves),
            "skipped": sum(r["result"] == "skip" for r in leaves),
            "not_run": sum(r["result"] == "not run" for r in leaves),
            "node": "real" if args.node else "stand-in",
            "standin_errors": kubelet.errors[:20] if kubelet else []}
    report(meta, leaves, markdown(leaves, meta), args.json, args.markdown)
    if meta["failed"] or returncode != 0:
        print(f"run.py: go test exited {returncode}; logs: {work}/go-test-*.log, operator log: "
              f"{work}/operator.log, Pod logs: {work}/pod-logs", file=sys.stderr)
        for package, output in outputs:
            failing = {r["case"].split(": ", 1)[-1] for r in leaves if r["result"] == "fail" and
                       (len(suites) == 1 or r["case"].startswith(package + ": "))}
            if failing:
                explain_failure(stage, operator_state, output, failing)
        keep = True
    else:
        keep = args.keep
    if not keep:
        subprocess.run(["rm", "-rf", work])
    if args.expect_cases is not None and meta["passed"] != args.expect_cases:
        print(f"run.py: {meta['passed']} cases passed, {args.expect_cases} expected",
              file=sys.stderr)
        sys.exit(1)
    sys.exit(0 if returncode == 0 and not meta["failed"] and leaves else 1)


if __name__ == "__main__":
    main()
