#!/usr/bin/env python3
"""rayjournal-replay against a journal written by the real operator that was SIGKILLed once:
summary shows the restart, timeline shows the retried RayJob across the restart, verify passes,
state/export/diagnose/diff work, and a corrupt journal is exit code 3."""
import json, os, shutil, signal, subprocess, sys, tempfile, time

operator, replay, samples = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="rayjournal-replay-")
journal, cluster = os.path.join(work, "journal"), os.path.join(work, "cluster")
base = [operator, "--journal-dir", journal, "--cluster-dir", cluster, "--no-progress", "--log-level", "warn", "--requeue-ms", "300"]
failures = []

def check(cond, what):
    if not cond:
        failures.append(what)

def run(*args):
    return subprocess.run([replay, *args, "--journal", journal], capture_output=True, text=True)

# Kill once the retrying RayJob has an intent journaled (a fixed delay killed a slow start, under
# a sanitizer on a busy machine, before the samples were even applied).
p = subprocess.Popen(base + ["--apply", samples])
deadline = time.monotonic() + 60
while time.monotonic() < deadline and '"type":"Intent"' not in run("-o", "json", "timeline", "default/rayjob-retry").stdout:
    time.sleep(0.05)
p.send_signal(signal.SIGKILL)
p.wait()
if subprocess.run(base + ["--exit-when-idle", "--timeout", "120"]).returncode != 0:
    sys.exit("FAIL: the operator did not finish after the restart")

s = run("summary")
check(s.returncode == 0 and s.stdout.count("epoch ") >= 2, "summary does not show two epochs:\n" + s.stdout)
t = run("timeline", "default/rayjob-retry")
check(t.returncode == 0 and "attempt 2" in t.stdout and "Retrying" in t.stdout, "timeline lacks the retry:\n" + t.stdout)
# The RayJob's timeline points at its RayClusters; a RayCluster's timeline shows the Pods and the
# head Service created for it, and the RayJob attempt it belongs to.
# Only RayClusters that were created are pointed at: the kill may land between the first plan's
# CreateRayCluster intent and its call, and then the next epoch names a new RayCluster.
pointer = [l for l in t.stdout.splitlines() if "timeline raycluster/" in l]
created = [l.split("CreateRayCluster ")[1].split()[0].rstrip(":") for l in t.stdout.splitlines()
           if ("outcome  CreateRayCluster " in l and l.endswith(": ok"))
           or ("resolved CreateRayCluster " in l and l.endswith(": found"))]
check(len(created) >= 2 and [p.split()[1] for p in pointer] == created,
      f"timeline does not point at exactly the RayClusters created {created}:\n" + t.stdout)
if not pointer:
    sys.exit("FAIL: " + "\n".join(failures))
cluster_target = pointer[-1].split("rayjournal-replay timeline ")[1].strip()
c = run("timeline", cluster_target)
check(c.returncode == 0 and "intend   CreatePod " in c.stdout and "intend   CreateService " in c.stdout
      and "attempt 2 of RayJob default/rayjob-retry" in c.stdout,
      "RayCluster timeline lacks its Pods, Service or RayJob attempt:\n" + c.stdout)
v = run("verify")
check(v.returncode == 0 and "ok" in v.stdout, "verify failed:\n" + v.stdout)
st = run("state", "default/rayjob-retry", "--at", "30")
check(st.returncode == 0 and json.loads(st.stdout)["at_seq"] == 30, "state --at failed:\n" + st.stdout + st.stderr)
ex = run("export", "--since", "1")
lines = [json.loads(l) for l in ex.stdout.splitlines()]
check(ex.returncode == 0 and lines and all(l["schema"] == "rayjournal.export.v1" for l in lines), "export failed")
check([l["seq"] for l in lines] == list(range(1, len(lines) + 1)), "export is not gap-free")
d = subprocess.run([replay, "diagnose", "default/rayjob-http", "--journal", journal, "--cluster-dir", cluster], capture_output=True, text=True)
check(d.returncode == 0 and "agree" in d.stdout, "diagnose found problems:\n" + d.stdout)
df = subprocess.run([replay, "diff", "--against-kube", "--journal", journal, "--cluster-dir", cluster], capture_output=True, text=True)
check(df.returncode == 0, "diff found drift:\n" + df.stdout)
# A cluster directory that is not one must never read as an all-clear.
for where in (os.path.join(work, "nonexistent"), work):
    for cmd in (["diff", "--against-kube"], ["diagnose", "default/rayjob-http"]):
        r = subprocess.run([replay, *cmd, "--journal", journal, "--cluster-dir", where],
                           capture_output=True, text=True)
        check(r.returncode == 2 and where in r.stdout and "--cluster-dir" in r.stdout,
              f"{cmd[0]} against {where}: exit {r.returncode}\n{r.stdout}")
# diagnose that finds a problem says so in its exit code.
gone = subprocess.run([replay, "diagnose", "default/no-such-rayjob", "--journal", journal,
                       "--cluster-dir", cluster], capture_output=True, text=True)
check(gone.returncode == 1 and "problems found" in gone.stdout,
      f"diagnose of a missing RayJob: exit {gone.returncode}\n{gone.stdout}")
bad = run("timeline", "not/a/target")
check(bad.returncode == 2, f"usage error exit {bad.returncode}")
missing = subprocess.run([replay, "verify", "--journal", os.path.join(work, "nope")], capture_output=True, text=True)
check(missing.returncode == 3 and "nope" in missing.stdout, "missing journal: exit %d %s" % (missing.returncode, missing.stdout))

# state of every RayJob streams one RayJob at a time; it says what state NS/NAME says of each.
every = run("state")
try:
    everyone = json.loads(every.stdout)["jobs"]
except ValueError:
    everyone = {}
    failures.append("state of all RayJobs is not JSON:\n" + every.stdout[:500])
check(len(everyone) >= 5 and "default/rayjob-retry" in everyone, f"state of all: {list(everyone)}")
for key in ["default/rayjob-retry", "default/rayjob-http"]:
    one = json.loads(run("state", key).stdout)["jobs"]
    check(one.get(key) == everyone.get(key), f"state {key} differs from state of all")

# Global flags go before or after the command, as kubectl's and git's (before, --journal ahead
# of the command was refused).
first = subprocess.run([replay, "--journal", journal, "verify"], capture_output=True, text=True)
check(first.returncode == 0 and "ok" in first.stdout, f"--journal before verify: {first.returncode} {first.stderr}")
# -o json: one document per command, the same facts as the text.
def as_json(*args, code=0):
    r = subprocess.run([replay, "-o", "json", *args, "--journal", journal], capture_output=True, text=True)
    check(r.returncode == code, f"-o json {args}: exit {r.returncode} {r.stdout[-300:]} {r.stderr[-300:]}")
    try:
        return json.loads(r.stdout)
    except ValueError:
        failures.append(f"-o json {args} is not one JSON document:\n{r.stdout[:500]}")
        return {}
sj = as_json("summary")
check(len(sj.get("restarts", [])) >= 2 and sj.get("records", {}).get("Intent", 0) > 0, f"summary json: {sj}")
vj = as_json("verify")
check(vj.get("ok") is True and vj.get("violations") == [], f"verify json: {vj}")
dj = as_json("diagnose", "default/rayjob-http", "--cluster-dir", cluster)
checks = {c["check"].split(" ")[0]: c for c in dj.get("checks", [])}
check(dj.get("verdict") == "ok" and dj.get("ray", {}).get("present") is True
      and checks.get("RayCluster", {}).get("kubernetes", "").startswith("present, owned")
      and "confirmed (journaled)" in checks.get("Ray", {}).get("journal", ""),
      f"diagnose json: {dj}")
gj = as_json("diagnose", "default/no-such-rayjob", "--cluster-dir", cluster, code=1)
bad = [c for c in gj.get("checks", []) if c["verdict"] == "problem"]
check(gj.get("verdict") == "problems" and bad and all(c.get("next") for c in bad),
      f"diagnose json of a missing RayJob (each problem with its next command): {gj}")
fj = as_json("diff", "--against-kube", "--cluster-dir", cluster)
check(fj.get("drifted") == [], f"diff json: {fj}")
tj = subprocess.run([replay, "timeline", "default/rayjob-retry", "-o", "json", "--journal", journal],
                    capture_output=True, text=True)
check(tj.returncode == 0 and all(json.loads(l)["seq"] for l in tj.stdout.splitlines()), "timeline -o json")
# Shell completion: bash completes commands, -o values and the journal's RayJob names.
script = subprocess.run([replay, "completion", "bash"], capture_output=True, text=True).stdout
env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(replay)) + ":" + os.environ["PATH"])
def complete(*words):
    line = " ".join(["rayjournal-replay", *words])
    probe = (script + f'\nCOMP_WORDS=(rayjournal-replay {" ".join(words)}); COMP_CWORD={len(words)}; '
             '_rayjournal_replay; printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, env=env)
    check(r.returncode == 0, f"completion of '{line}': {r.stderr}")
    return r.stdout.split()
check("diagnose" in complete("di"), "bash completion of commands")
check(complete("-o", "") == ["text", "json"], "bash completion of -o")
check("default/rayjob-retry" in complete("--journal", journal, "timeline", "default/rayjob-r"),
      "bash completion of RayJob names: " + " ".join(complete("--journal", journal, "timeline", "")))
zsh = subprocess.run([replay, "completion", "zsh"], capture_output=True, text=True)
check(zsh.returncode == 0 and zsh.stdout.startswith("#compdef rayjournal-replay"), "zsh completion")

print("\n".join(failures) if failures else "replay cli ok")
print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
if not failures:
    shutil.rmtree(work)
sys.exit(1 if failures else 0)
