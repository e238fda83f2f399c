#!/usr/bin/env python3
"""Damaged journals, tried as an SRE would on a journal the real operator wrote (the samples,
with a SIGKILL mid-run so that the newest records are only in the write-ahead log). For each
class of damage: a plain start exits 3 naming the cause and leaves the directory exactly as it
was (so a second start does the same); --salvage-journal starts, finishes every RayJob as a
clean run does, keeps the original aside untouched, and leaves a journal that
`rayjournal-replay verify` passes, listing what was lost.
Usage: journal_damage_test.py OPERATOR REPLAY SAMPLES_DIR"""
import glob, hashlib, json, os, re, shutil, signal, subprocess, sys, tempfile, time, urllib.request

operator, replay, samples = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="rayjournal-damage-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def base(d):
    return [operator, "--journal-dir", os.path.join(d, "journal"), "--cluster-dir",
            os.path.join(d, "cluster"), "--no-progress", "--log-level", "warn", "--requeue-ms", "300"]


def finish(d, *extra):
    summary = os.path.join(d, "summary.json")
    p = subprocess.run(base(d) + ["--exit-when-idle", "--timeout", "120", "--summary-json", summary,
                                  *extra], capture_output=True, text=True)
    states = {}
    if os.path.exists(summary):
        states = {j["name"]: j.get("jobDeploymentStatus") for j in json.load(open(summary))}
    return p, states


def tree_hash(d):
    h = hashlib.sha256()
    for f in sorted(os.listdir(d)):
        h.update(f.encode())
        h.update(open(os.path.join(d, f), "rb").read())
    return h.hexdigest()


# The journal every case starts from: the samples run to the end (a clean stop puts them in
# table files), then more RayJobs run a while and the operator is SIGKILLed after its
# high-water mark has advanced past records that are only in the write-ahead log; a clean
# run's final states for comparison.
original = os.path.join(work, "original")
os.makedirs(original)
first, _ = finish(original, "--apply", samples)
check(first.returncode == 0, "the samples did not finish:\n" + first.stderr[-1500:])
more = os.path.join(work, "more.yaml")
with open(os.path.join(samples, "rayjob-success.yaml")) as f:
    text = f.read()
with open(more, "w") as f:
    for i in range(10):
        f.write(text.replace("name: rayjob-success", f"name: more-{i}", 1) + "\n---\n")
p = subprocess.Popen(base(original) + ["--apply", more])
time.sleep(3)
p.send_signal(signal.SIGKILL)
p.wait()
reference_dir = os.path.join(work, "reference")
shutil.copytree(original, reference_dir)
_, expected = finish(reference_dir)
check(sum(s == "Complete" for s in expected.values()) >= 15,
      "the clean run did not finish the RayJobs: %s" % expected)


def largest(d, pattern):
    files = glob.glob(os.path.join(d, "journal", pattern))
    return max(files, key=os.path.getsize) if files else None


def flip(path, offset, count=16):
    with open(path, "r+b") as f:
        f.seek(offset)
        data = bytearray(f.read(count))
        f.seek(offset)
        f.write(bytes(b ^ 0x5A for b in data))


def remove_current(d):
    os.remove(os.path.join(d, "journal", "CURRENT"))


def remove_wal(d):
    for wal in glob.glob(os.path.join(d, "journal", "*.log")):
        os.remove(wal)


def damage_table_footer(d):
    table = largest(d, "*.sst")  # old history: a restart does not read it
    flip(table, os.path.getsize(table) - 12, 8)


def tables_of(d, family):
    # A table file's properties block names its column family ("rocksdb.column.family.name",
    # prefix-compressed against the ".id" key before it, so the bytes read "name<family>").
    marker = b"name" + family.encode()
    return [f for f in glob.glob(os.path.join(d, "journal", "*.sst"))
            if marker in open(f, "rb").read()]


def damage_family(family):
    def damage(d):
        tables = tables_of(d, family)
        check(tables, f"no {family} table file to damage")
        for table in tables:
            flip(table, 10, 40)  # the first data block
    return damage


def damage_wal_middle(d):
    wal = largest(d, "*.log")
    flip(wal, os.path.getsize(wal) // 2)


# (damage, what the error names, whether a plain start refuses: damage to history a restart
# does not replay lets it start, and verify reports it).
cases = {"missing CURRENT": (remove_current, "CURRENT", True),
         "missing write-ahead log": (remove_wal, "acknowledged", True),
         "damaged write-ahead log": (damage_wal_middle, ".log offset", True),
         "damaged table file": (damage_table_footer, ".sst", True),
         "damaged meta table": (damage_family("meta"), ".sst", True),
         "damaged checkpoints table": (damage_family("checkpoints"), ".sst", True)}
for name, (damage, named, refuses) in cases.items():
    d = os.path.join(work, name.replace(" ", "-"))
    shutil.copytree(original, d)
    damage(d)
    journal = os.path.join(d, "journal")
    before = tree_hash(journal)
    if not refuses:
        v = subprocess.run([replay, "verify", "--journal", journal], capture_output=True, text=True)
        check(v.returncode != 0 and named in v.stdout, f"{name}: verify does not report it:\n{v.stdout}")
    for attempt in (1, 2) if refuses else ():
        start = subprocess.run(base(d) + ["--exit-when-idle", "--timeout", "30"],
                               capture_output=True, text=True)
        out = start.stdout + start.stderr
        check(start.returncode == 3 and named in out and journal in out,
              f"{name}: start {attempt} exit {start.returncode}, message lacks {named!r}:\n{out[-1500:]}")
        check(tree_hash(journal) == before, f"{name}: start {attempt} changed the journal directory")
    salvaged, states = finish(d, "--salvage-journal")
    check(salvaged.returncode == 0, f"{name}: salvage exit {salvaged.returncode}\n{salvaged.stderr[-1500:]}")
    check(states == expected, f"{name}: final states differ from a clean run:\n{states}\n{expected}")
    moved = glob.glob(journal + ".corrupt-*")
    check(len(moved) == 1 and tree_hash(moved[0]) == before, f"{name}: the original was not kept untouched")
    v = subprocess.run([replay, "verify", "--journal", journal], capture_output=True, text=True)
    check(v.returncode == 0, f"{name}: verify after salvage exit {v.returncode}:\n{v.stdout[-1500:]}")
    if "checkpoints" in name:
        check("DROPPED" in v.stdout, f"{name}: verify does not say which checkpoint states went")
    s = subprocess.run([replay, "summary", "--journal", journal], capture_output=True, text=True)
    check(s.returncode == 0, f"{name}: summary after salvage:\n{s.stdout}{s.stderr}")
    print(f"{name}: {v.stdout.strip().splitlines()[-1] if v.stdout else v.stderr}")


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.read().decode()


def scrub_finds_bad_block():
    """A bad block in old history (a records table behind the newest checkpoint, which a
    restart does not read): the operator starts, and its background scrub reports the damage
    (an error line naming the file, a metric) while it keeps working."""
    d = os.path.join(work, "bad-block-in-old-history")
    shutil.copytree(original, d)
    tables = sorted(tables_of(d, "records"))  # oldest first: the samples' history
    check(tables, "no records table to damage")
    if not tables:
        return
    flip(tables[0], os.path.getsize(tables[0]) // 3, 64)
    log_path = os.path.join(d, "operator.log")
    command = base(d) + ["--metrics-bind-address", "127.0.0.1:0"]
    command[command.index("warn")] = "info"  # the line announcing the status server's port
    with open(log_path, "w") as log:
        p = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    text = lambda: open(log_path, errors="replace").read()
    corrupt = 0
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not corrupt:
        port = re.search(r"on port (\d+)\n", text())
        if port:
            m = re.search(r"^rayjournal_journal_scrub_corrupt_records_total (\d+)",
                          get(int(port.group(1)), "/metrics"), re.M)
            corrupt = int(m.group(1)) if m else 0
        time.sleep(0.2)
    check(p.poll() is None, f"the operator exited on old damage ({p.poll()}):\n{text()[-1500:]}")
    check(corrupt > 0, "the scrub metric never counted the bad block")
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    lines = [l for l in text().splitlines() if "scrub found damaged history" in l]
    check(lines and tables[0] in lines[0] and os.path.join(d, "journal") in lines[0],
          "no scrub error line naming the journal and the table:\n" + "\n".join(lines[:3]))
    print("bad block in old history:", lines[0] if lines else "not reported")


scrub_finds_bad_block()
print("\n".join(failures) if failures else "journal damage ok")
if not failures:
    shutil.rmtree(work)
sys.exit(1 if failures else 0)
