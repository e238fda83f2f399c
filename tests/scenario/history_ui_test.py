#!/usr/bin/env python3
"""The history UI in a real browser (Selenium driving Debian's chromium through chromium-driver)
against the operator on the embedded cluster, and its JSON API over HTTP: the list shows the
RayJobs of the demo and its filters keep what they say; a RayJob's page adds the records of its
retry while the test watches; a deleted RayJob stays findable with its whole history; the page
survives an operator kill -9 and restart (it says it is reconnecting, then shows the restart
band); `rayjournal-replay serve` serves the same over a copied journal.
Usage: history_ui_test.py OPERATOR REPLAY SAMPLES_DIR [SCREENSHOT.png]"""
import base64, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    sys.exit("FAIL: Selenium is not installed; bash scripts/setup-test-deps.sh puts it in .cache/ui-venv")

operator, replay, samples = sys.argv[1:4]
screenshot = sys.argv[4] if len(sys.argv) > 4 else ""
work = tempfile.mkdtemp(prefix="rayjournal-ui-")
journal, cluster = os.path.join(work, "journal"), os.path.join(work, "cluster")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # a page between two renders, a server not up yet
            pass
        time.sleep(0.1)
    return check(False, "timed out waiting for " + what)


# A retrying RayJob slow enough to watch (under a sanitizer, with Chromium starting beside it):
# its first attempt fails after 8 s, its second succeeds.
watched = os.path.join(work, "rayjob-watched.yaml")
with open(os.path.join(samples, "rayjob-retry.yaml")) as f:
    text = f.read().replace("name: rayjob-retry", "name: rayjob-watched", 1)
with open(watched, "w") as f:
    f.write(text.replace('sim-duration: "500ms"', 'sim-duration: "8s"'))

# A token-auth RayJob with a secret value in its spec: neither it nor the generated token may be
# served.
SECRET_ENV = "hunter2-not-for-the-ui"
secrets_manifest = os.path.join(work, "rayjob-secrets.yaml")
with open(secrets_manifest, "w") as f:
    f.write(f"""apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-secrets
  annotations:
    rayjournal.io/sim-duration: "300ms"
spec:
  entrypoint: python -c "print('secret')"
  rayClusterSpec:
    rayVersion: "2.52.0"
    authOptions:
      mode: token
    headGroupSpec:
      rayStartParams: {{}}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.52.0
              env:
                - name: API_KEY
                  value: {SECRET_ENV}
""")

port = free_port()
log_path = os.path.join(work, "operator.log")


def start_operator(*extra):
    log = open(log_path, "a")
    return subprocess.Popen([operator, "--journal-dir", journal, "--cluster-dir", cluster, "--no-progress",
                             "--log-level", "info", "--requeue-ms", "300",
                             "--ui-bind-address", f"127.0.0.1:{port}", *extra],
                            stdout=log, stderr=subprocess.STDOUT)


op = start_operator("--apply", samples, watched, secrets_manifest)
until(lambda: get(port, "/api/v1/rayjobs")[0] == 200, 60, "the history UI to serve")

options = webdriver.ChromeOptions()
for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--window-size=1400,1000"):
    options.add_argument(arg)
options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                           options=options)
base = f"http://127.0.0.1:{port}"


def rows(css="#runs tbody tr"):
    return browser.find_elements(By.CSS_SELECTOR, css)


def names():
    return sorted(r.get_attribute("data-name") for r in rows())


def record_texts():
    return [r.text for r in rows("#records tbody tr")]


try:
    # A RayJob's page follows it live, across an operator kill -9 and restart: it says it is
    # reconnecting, then shows the restart band and the retry's records as they arrive.
    browser.get(f"{base}/rayjobs/default/rayjob-watched")
    until(lambda: any("attempt 1" in t for t in record_texts()), 30, "the first attempt on the page")
    check(not any("attempt 2" in t for t in record_texts()), "the retry was already there when the page opened")
    op.send_signal(signal.SIGKILL)
    op.wait()
    until(lambda: "reconnecting" in browser.find_element(By.ID, "state").text, 15, "the page to say it reconnects")
    op = start_operator()
    until(lambda: "following" in browser.find_element(By.ID, "state").text, 60, "the page to reconnect")
    until(lambda: any("controller restarted: epoch" in t for t in record_texts()), 60, "the restart band")
    until(lambda: any("attempt 2" in t for t in record_texts()), 60, "the retry to appear on the open page")
    until(lambda: any("Complete" in t for t in record_texts()), 60, "the second attempt to complete on the page")
    # Each attempt's RayCluster has a lane beside the RayJob's records, merged by seq.
    lanes = browser.find_elements(By.CSS_SELECTOR, "#records a.cluster")
    check(len(lanes) == 2, f"{len(lanes)} RayCluster links for two attempts")
    clusters = [a.get_attribute("href").rsplit("/", 1)[1] for a in lanes]

    def lane_texts():
        return [r.text for r in rows("#records tbody tr.in-lane")]

    until(lambda: all(any(t.startswith("#") and f"{c}: " in t and "CreatePod" in t
                          for t in lane_texts()) for c in clusters),
          30, f"both attempts' RayClusters ({clusters}) in the lane with their Pods")
    seqs = [int(r.get_attribute("data-seq")) for r in rows("#records tbody tr.record")]
    check(seqs == sorted(set(seqs)), "the page shows records out of order or twice")
    check(len(lane_texts()) < len(seqs), "the lane holds every record of the page")
    # And a timeline of its own, one click away.
    if lanes:
        lanes[-1].click()
        until(lambda: any("CreatePod" in t for t in record_texts()) and
              browser.find_element(By.ID, "title").text.startswith("RayCluster default/rayjob-watched-"),
              20, "the second attempt's RayCluster timeline")

    # The list: every RayJob of the demo; the status filter keeps the failed one.
    samples_names = sorted([n[:-5] for n in os.listdir(samples) if n.endswith(".yaml")] +
                           ["rayjob-watched", "rayjob-secrets"])
    browser.get(base + "/")
    until(lambda: names() == samples_names, 30, "the list of every RayJob")
    browser.find_element(By.NAME, "status").send_keys("Failed")
    until(lambda: names() == ["rayjob-failed"], 10, "the status filter to keep rayjob-failed alone")
    browser.find_element(By.NAME, "status").clear()

    # A deleted RayJob stays findable, with its whole history.
    until(lambda: json.loads(get(port, "/api/v1/rayjobs?deleted=true")[1])["runs"], 30,
          "rayjob-deletion-rules to delete itself")
    browser.get(base + "/")
    browser.find_element(By.NAME, "deleted").click()
    until(lambda: names() == ["rayjob-deletion-rules"], 10, "the deleted filter")
    rows()[0].find_element(By.TAG_NAME, "a").click()
    until(lambda: any("RemoveFinalizer" in t for t in record_texts()), 10, "the deleted RayJob's history")
    check(any("CreateRayCluster" in t for t in record_texts()), "the deleted RayJob's page lacks its start")
    if screenshot:
        browser.get(f"{base}/rayjobs/default/rayjob-watched")
        until(lambda: any("Complete" in t for t in record_texts()), 10, "the page for the screenshot")
        browser.save_screenshot(screenshot)

    # The API under the pages: paging, errors.
    page = json.loads(get(port, "/api/v1/rayjobs/default/rayjob-watched/records?after=0&limit=3")[1])
    check(len(page["records"]) == 3 and page["more"] and page["nextAfter"] == page["records"][-1]["seq"],
          f"a page of 3 records: {page}")
    rest = json.loads(get(port, f"/api/v1/rayjobs/default/rayjob-watched/records?after={page['nextAfter']}")[1])
    check(rest["records"] and rest["records"][0]["seq"] > page["nextAfter"], "the next page does not follow on")
    first = json.loads(get(port, "/api/v1/rayjobs?limit=4")[1])
    second = json.loads(get(port, "/api/v1/rayjobs?limit=4&offset=4")[1])
    check(first["total"] == len(samples_names) and len(first["runs"]) == 4 and
          [r["name"] for r in first["runs"] + second["runs"]] == samples_names[:8],
          f"the list in pages of 4: {first['total']} {[r['name'] for r in first['runs'] + second['runs']]}")
    check(get(port, "/api/v1/rayjobs?since=yesterday")[0] == 400, "a bad since is not a 400")

    # No secret value is ever served: not an env value of the spec, not the cluster's token.
    until(lambda: json.loads(get(port, "/api/v1/rayjobs?name=rayjob-secrets")[1])["runs"][0]["jobDeploymentStatus"] == "Complete",
          60, "rayjob-secrets to complete")
    secret_cluster = json.loads(get(port, "/api/v1/rayjobs?name=rayjob-secrets")[1])["runs"][0]["rayClusterName"]
    served = "".join(get(port, path)[1] for path in (
        "/api/v1/rayjobs?limit=5000", "/api/v1/pending",
        "/api/v1/rayjobs/default/rayjob-secrets/records?limit=5000", "/rayjobs/default/rayjob-secrets",
        f"/api/v1/rayclusters/default/{secret_cluster}/records?limit=5000"))
    check("CreateSecret" in served, "the token-auth RayCluster's records do not show its Secret created")
    tokens = []
    for line in open(os.path.join(cluster, "objects.jsonl")):
        obj = json.loads(line)
        obj = obj.get("object", obj)
        if obj.get("kind") == "Secret":
            tokens += [v for v in obj.get("stringData", {}).values() if v]
            tokens += [v for v in obj.get("data", {}).values() if v]
            tokens += [base64.b64decode(v).decode(errors="replace") for v in obj.get("data", {}).values() if v]
    check(tokens, "the token-auth RayJob made no Secret to check against")
    check(SECRET_ENV not in served, "an env value of the spec is served")
    check(not any(t in served for t in tokens), "the cluster's auth token is served")
    check(get(port, "/nope")[0] == 404, "an unknown path is not a 404")
    check(get(port, "/api/v1/rayjobs/default/rayjob-watched/records?limit=0")[0] == 400, "limit=0 is not a 400")
finally:
    browser.quit()
    op.send_signal(signal.SIGTERM)
    try:
        op.wait(timeout=30)
    except subprocess.TimeoutExpired:
        op.kill()

# The restart band, on the RayJob page of a journal copy served by rayjournal-replay serve.
copy = os.path.join(work, "copy")
shutil.copytree(journal, copy)
serve = subprocess.Popen([replay, "serve", "--journal", copy, "--ui-bind-address", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
line = serve.stdout.readline()
m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
if check(m, "rayjournal-replay serve did not say where it serves: " + line):
    served = int(m.group(1))
    listed = json.loads(get(served, "/api/v1/rayjobs")[1])["runs"]
    check(len(listed) == len(samples_names), f"serve lists {len(listed)} RayJobs")
    records = json.loads(get(served, "/api/v1/rayjobs/default/rayjob-watched/records?limit=5000")[1])["records"]
    check(len({r["epoch"] for r in records}) >= 1, "serve returns no records")
    status, html = get(served, "/rayjobs/default/rayjob-watched")
    check(status == 200 and "<table" in html, "serve does not serve the RayJob page")
serve.send_signal(signal.SIGINT)
check(serve.wait(timeout=10) == 0, "rayjournal-replay serve does not stop on SIGINT")

if failures:
    print("--- the operator's log, last 40 lines ---")
    print("\n".join(open(log_path, errors="replace").read().splitlines()[-40:]))
    sys.exit("FAIL:\n" + "\n".join(failures))
shutil.rmtree(work, ignore_errors=True)
print("ok: history UI")
