#include "operator/HistoryPages.h"

namespace rayjournal::operator_ {
namespace {

constexpr const char* kHead = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>rayjournal: %TITLE%</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
header a{margin-right:1em} table{border-collapse:collapse;margin-top:1em}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4} #state{color:#b00;min-height:1.2em} #state.live{color:#080}
tr.band td{background:#eef;font-weight:600} tr.restart td{background:#fdd}
td.seq,td.t{font-family:monospace;white-space:nowrap} td.lane{background:#f7fbf3} form label{margin-right:1em}
</style></head><body>
<header><a href="/">RayJobs</a><a href="/pending">Pending</a></header>
<h1 id="title">%TITLE%</h1><p id="state"></p>
)";

constexpr const char* kCommon = R"(<script>
function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === undefined || text === '' ? '-' : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}
function link(td, ns, name) {
  td.textContent = '';
  const a = document.createElement('a');
  a.href = '/rayjobs/' + encodeURIComponent(ns) + '/' + encodeURIComponent(name);
  a.textContent = name;
  td.appendChild(a);
}
function state(text, live) {
  const s = document.getElementById('state');
  s.textContent = text;
  s.className = live ? 'live' : '';
}
async function getJson(url) {
  const r = await fetch(url, {cache: 'no-store'});
  if (!r.ok) throw new Error(r.status + ' ' + (await r.text()));
  return r.json();
}
function runRow(r, columns) {
  const tr = document.createElement('tr');
  tr.dataset.name = r.name;
  tr.dataset.namespace = r.namespace;
  for (const c of columns) {
    const td = cell(tr, r[c]);
    if (c === 'name') link(td, r.namespace, r.name);
    if (c === 'deleted') td.textContent = r.deleted ? r.deletedAt : '-';
  }
  return tr;
}
</script>
)";

std::string head(const std::string& title) {
  std::string h = kHead;
  for (size_t at; (at = h.find("%TITLE%")) != std::string::npos;) h.replace(at, 7, title);
  return h + kCommon;
}

constexpr const char* kList = R"(<form id="filters">
<label>namespace <input name="namespace" size="12"></label>
<label>status <input name="status" size="16" placeholder="Running,Failed"></label>
<label>reason <input name="reason" size="14"></label>
<label>since seq <input name="since" size="8"></label>
<label><input type="checkbox" name="deleted" value="true"> deleted only</label>
</form>
<table id="runs"><thead><tr><th>Namespace</th><th>Name</th><th>Status</th><th>Job</th>
<th>Reason</th><th>Attempts</th><th>Pending</th><th>Last record</th><th>Deleted</th></tr></thead>
<tbody></tbody></table>
<script>
const form = document.getElementById('filters');
const columns = ['namespace', 'name', 'jobDeploymentStatus', 'jobStatus', 'reason', 'attempts',
                 'pendingIntents', 'lastRecord', 'deleted'];
function query() {
  const p = new URLSearchParams();
  for (const el of form.elements) {
    if (el.type === 'checkbox') { if (el.checked) p.set(el.name, 'true'); }
    else if (el.value) p.set(el.name, el.value.trim());
  }
  return p.toString();
}
async function load() {
  try {
    const d = await getJson('/api/v1/rayjobs?' + query());
    document.querySelector('#runs tbody').replaceChildren(...d.runs.map(r => runRow(r, columns)));
    state('live: journal at seq ' + d.latestSeq + ', ' + d.runs.length + ' of ' + d.total +
          ' RayJobs shown' + (d.runs.length < d.total ? ' (narrow them with the filters)' : ''), true);
  } catch (e) {
    state('cannot read the journal, retrying: ' + e.message);
  }
}
form.addEventListener('input', load);
form.addEventListener('submit', e => { e.preventDefault(); load(); });
setInterval(load, 2000);
load();
</script></body></html>
)";

constexpr const char* kPending = R"(<table id="runs"><thead><tr><th>Namespace</th><th>Name</th>
<th>Status</th><th>Pending intents</th><th>Last error</th><th>Last record</th></tr></thead>
<tbody></tbody></table>
<script>
const columns = ['namespace', 'name', 'jobDeploymentStatus', 'pendingIntents', 'lastError',
                 'lastRecord'];
async function load() {
  try {
    const d = await getJson('/api/v1/pending');
    document.querySelector('#runs tbody').replaceChildren(...d.runs.map(r => runRow(r, columns)));
    state('live: journal at seq ' + d.latestSeq + ', ' + d.runs.length + ' of ' + d.total + ' shown', true);
  } catch (e) {
    state('cannot read the journal, retrying: ' + e.message);
  }
}
setInterval(load, 2000);
load();
</script></body></html>
)";

constexpr const char* kRayJob = R"(<p id="run"></p>
<table id="records"><thead><tr><th>Seq</th><th>Time</th><th>Record</th>
<th class="lane">Its RayClusters</th></tr></thead><tbody></tbody></table>
<script>
const parts = location.pathname.split('/');
const plural = parts[1], kind = plural === 'rayclusters' ? 'RayCluster' : 'RayJob';
const ns = decodeURIComponent(parts[2]), name = decodeURIComponent(parts[3]);
document.getElementById('title').textContent = kind + ' ' + ns + '/' + name;
document.title = 'rayjournal: ' + ns + '/' + name;
if (kind !== 'RayJob') document.querySelector('#records th.lane').remove();
const columns = kind === 'RayJob' ? 4 : 3;
// The records cursor of the page's object (key '') and of each RayCluster of the RayJob's
// attempts (key: its name), whose records join the RayJob's by seq, in a lane of their own.
const cursors = new Map([['', 0]]);
let epoch = 0, attempt = 0, uid = '', start = 0;
function clusterPath(cluster) {
  return '/rayclusters/' + encodeURIComponent(ns) + '/' + encodeURIComponent(cluster);
}
// Rows stay in seq order whichever stream a record came from: a band goes before its record.
function insert(tr, seq, before) {
  const body = document.querySelector('#records tbody');
  const goesBefore = r => before ? +r.dataset.seq >= seq : +r.dataset.seq > seq;
  let next = body.lastElementChild;  // mostly the newest record: appended without a search
  if (!next || !goesBefore(next)) next = null;
  else next = [...body.children].find(goesBefore);
  body.insertBefore(tr, next);
}
function band(text, cls, seq) {
  const tr = document.createElement('tr');
  tr.className = 'band ' + cls;
  tr.dataset.seq = seq;
  cell(tr, text).colSpan = columns;
  insert(tr, seq, true);
}
function recordRow(r) {
  if (!start) start = r.time_ms;
  const tr = document.createElement('tr');
  tr.className = 'record ' + r.type;
  tr.dataset.seq = r.seq;
  cell(tr, '#' + r.seq, 'seq');
  cell(tr, '+' + ((r.time_ms - start) / 1000).toFixed(3) + 's', 't');
  return tr;
}
function add(r) {
  const u = r.object.uid;
  if (u !== uid) { if (uid) band('a new RayJob under this name (uid ' + u + ')', 'uid', r.seq); uid = u; }
  if (r.epoch !== epoch) {
    band(epoch ? 'controller restarted: epoch ' + r.epoch : 'epoch ' + r.epoch,
         epoch ? 'restart' : 'epoch', r.seq);
    epoch = r.epoch;
  }
  if (r.attempt !== attempt) { band('attempt ' + r.attempt, 'attempt', r.seq); attempt = r.attempt; }
  const tr = recordRow(r);
  const text = cell(tr, r.text);
  if (columns === 4) cell(tr, '', 'lane');
  const cluster = r.body && r.body.observation === 'AttemptStarted' && r.body.rayClusterName;
  if (cluster) {
    const a = document.createElement('a');
    a.href = clusterPath(cluster);
    a.className = 'cluster';
    a.textContent = ' (its RayCluster\'s timeline)';
    text.appendChild(a);
    if (kind === 'RayJob' && !cursors.has(cluster)) cursors.set(cluster, 0);
  }
  insert(tr, r.seq, false);
}
function addClusterRecord(cluster, r) {
  const tr = recordRow(r);
  tr.classList.add('in-lane');
  cell(tr, '');
  const lane = cell(tr, ': ' + r.text, 'lane');
  const a = document.createElement('a');
  a.href = clusterPath(cluster);
  a.textContent = cluster;
  lane.prepend(a);
  insert(tr, r.seq, false);
}
// Reads path's records after cursors[key], page by page, moving the cursor past each page as it
// is shown: a read that fails half way resumes after the last page shown, never repeats it.
async function follow(path, key, onRecord) {
  let more = true;
  while (more) {
    const d = await getJson(path + '/records?after=' + cursors.get(key));
    d.records.forEach(onRecord);
    cursors.set(key, d.nextAfter);
    more = d.more;
  }
}
async function header() {
  if (kind !== 'RayJob') return;
  const d = await getJson('/api/v1/rayjobs?namespace=' + encodeURIComponent(ns) + '&name=' +
                          encodeURIComponent(name));
  const r = d.runs[d.runs.length - 1];
  document.getElementById('run').textContent = !r ? 'no records yet' :
      'status ' + (r.jobDeploymentStatus || '-') + ', job ' + (r.jobStatus || '-') +
      ', attempts ' + r.attempts + ', pending intents ' + r.pendingIntents +
      (r.deleted ? ', deleted at ' + r.deletedAt : '') + (r.lastError ? ', last error: ' + r.lastError : '');
}
async function poll() {
  try {
    await follow('/api/v1/' + plural + '/' + encodeURIComponent(ns) + '/' +
                 encodeURIComponent(name), '', add);
    for (const cluster of [...cursors.keys()].filter(k => k))
      await follow('/api/v1' + clusterPath(cluster), cluster, r => addClusterRecord(cluster, r));
    await header();
    state('live: following the journal', true);
  } catch (e) {
    state('cannot read the journal, reconnecting: ' + e.message);
  }
  setTimeout(poll, 1000);
}
poll();
</script></body></html>
)";

}  // namespace

std::string listPage() { return head("RayJobs") + kList; }
std::string pendingPage() { return head("Pending intents and last errors") + kPending; }
std::string rayJobPage() { return head("RayJob") + kRayJob; }

}  // namespace rayjournal::operator_
