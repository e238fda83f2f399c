#include "TimelineHtml.h"

namespace rayjournal::replay {
namespace {

using nlohmann::json;

// The page; the records replace the line __DATA__. The script builds everything from them.
constexpr const char* kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__ — rayjournal timeline</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #1d232a; }
h1 { font-size: 16px; margin: 0 0 4px; } .legend span { margin-right: 12px; }
svg { border: 1px solid #d0d7de; background: #fff; }
.lane-bg { fill: #f6f8fa; } .lane-label { font-size: 12px; fill: #57606a; }
.epoch { fill: #ddf4ff; opacity: .5; } .restart { fill: #cf222e; opacity: .18; }
.restart-label { fill: #cf222e; font-size: 11px; }
.bar { stroke: #1d232a; stroke-width: .5; cursor: pointer; }
.ok { fill: #2da44e; } .error { fill: #cf222e; } .abandoned { fill: #8c959f; }
.indoubt { fill: #fff; stroke: #bf8700; stroke-width: 1.5; stroke-dasharray: 3 2; }
.resolved { stroke: #8250df; stroke-width: 2; }
.marker-ray { fill: #0969da; } .marker-deploy { fill: #bf8700; }
.axis { stroke: #8c959f; } .tick { font-size: 10px; fill: #57606a; }
table { border-collapse: collapse; margin-top: 12px; width: 100%; }
td, th { border-bottom: 1px solid #eaeef2; padding: 2px 6px; text-align: left; vertical-align: top; }
tr.selected { background: #fff8c5; } td.text { font-family: ui-monospace, monospace; }
</style></head><body>
<h1>__TITLE__</h1>
<div class="legend"><span>■ <b style="color:#2da44e">ok</b></span><span>■ <b style="color:#cf222e">error</b></span>
<span>■ <b style="color:#8c959f">abandoned</b></span><span>□ <b style="color:#bf8700">in doubt</b></span>
<span><b style="color:#8250df">outline</b>: resolved after a restart</span><span>● Ray status</span>
<span style="color:#bf8700">◆ deployment status</span><span style="color:#cf222e">▌ operator down (restart)</span></div>
<div id="chart"></div>
<table id="records"><thead><tr><th>seq</th><th>time</th><th>epoch</th><th>attempt</th><th>record</th></tr></thead><tbody></tbody></table>
<script id="data" type="application/json" data-lanes="__LANES__">
__DATA__
</script>
<script>
(function () {
  const data = document.getElementById('data');
  const all = JSON.parse(data.textContent), byObject = data.dataset.lanes === 'object';
  const laneOf = r => byObject ? r.object.kind + ' ' + r.object.namespace + '/' + r.object.name
                               : 'attempt ' + (r.attempt || 1);
  // Records of no object (a restart's ControllerStarted) only mark epochs.
  const records = all.filter(r => r.object && r.object.kind);
  const NS = 'http://www.w3.org/2000/svg';
  const el = (name, attrs, parent) => { const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e; };
  const t = r => r.time_ms;
  const t0 = Math.min(...all.map(t)), t1 = Math.max(...all.map(t), t0 + 1);
  const attempts = byObject ? [...new Set(records.map(laneOf))]
                            : [...new Set(records.map(laneOf))].sort((a, b) => parseInt(a.slice(8)) - parseInt(b.slice(8)));
  const W = 1100, left = byObject ? 260 : 90, laneH = 34, top = 24, H = top + attempts.length * laneH + 24;
  const x = v => left + (W - left - 10) * (v - t0) / (t1 - t0);
  const svg = el('svg', {width: W, height: H, id: 'timeline'}, document.getElementById('chart'));
  // Epochs: the span of each operator run; the gap before a later one is a restart.
  const epochs = {};
  for (const r of all) { const e = epochs[r.epoch] || (epochs[r.epoch] = [t(r), t(r)]);
    e[0] = Math.min(e[0], t(r)); e[1] = Math.max(e[1], t(r)); }
  const ids = Object.keys(epochs).map(Number).sort((a, b) => a - b);
  ids.forEach((id, i) => { const [a, b] = epochs[id];
    el('rect', {class: 'epoch', x: x(a), y: top - 6, width: Math.max(1, x(b) - x(a)), height: H - top}, svg);
    if (i > 0) { const prev = epochs[ids[i - 1]][1];
      const band = el('rect', {class: 'restart', 'data-epoch': id, x: x(prev), y: 0,
        width: Math.max(3, x(a) - x(prev)), height: H}, svg);
      el('title', {}, band).textContent = 'operator restarted: epoch ' + id;
      el('text', {class: 'restart-label', x: x(prev) + 2, y: 12}, svg).textContent = 'restart → epoch ' + id; } });
  const laneY = {};
  attempts.forEach((a, i) => { laneY[a] = top + i * laneH;
    const g = el('g', {class: 'lane', 'data-attempt': a}, svg);
    el('rect', {class: 'lane-bg', x: left, y: laneY[a], width: W - left - 10, height: laneH - 6}, g);
    el('text', {class: 'lane-label', x: 6, y: laneY[a] + 18}, g).textContent = a; });
  el('line', {class: 'axis', x1: left, x2: W - 10, y1: H - 18, y2: H - 18}, svg);
  for (let i = 0; i <= 5; i++) { const v = t0 + (t1 - t0) * i / 5;
    el('text', {class: 'tick', x: x(v) - 14, y: H - 4}, svg).textContent = ((v - t0) / 1000).toFixed(1) + ' s'; }
  const rows = {}, tbody = document.querySelector('#records tbody');
  for (const r of all) { const tr = document.createElement('tr'); tr.id = 'seq-' + r.seq;
    for (const v of [r.seq, new Date(r.time_ms).toISOString(), r.epoch, r.attempt, r.text]) { const td = document.createElement('td');
      td.textContent = v; tr.appendChild(td); } tr.lastChild.className = 'text'; tbody.appendChild(tr); rows[r.seq] = tr; }
  const select = seq => { document.querySelectorAll('tr.selected').forEach(e => e.classList.remove('selected'));
    if (rows[seq]) { rows[seq].classList.add('selected'); rows[seq].scrollIntoView({block: 'nearest'}); } };
  // Bars: each intent to its outcome (none: in doubt to the end of the page's time).
  const outcomes = {};
  for (const r of records) if (r.type === 'Outcome' && r.body) outcomes[r.body.intent_seq] = r;
  const resolvedKinds = ['found', 'absent', 'superseded'];
  for (const r of records) { if (r.type !== 'Intent') continue;
    const o = outcomes[r.seq], end = o ? t(o) : t1, y = laneY[laneOf(r)] + 4;
    const result = o ? (o.body.result || o.body.resolved_after_restart || '') : '';
    const resolved = o && (resolvedKinds.includes(result) || o.epoch !== r.epoch);
    const cls = !o ? 'indoubt' : result === 'error' ? 'error' : result === 'abandoned' ? 'abandoned' : 'ok';
    const bar = el('rect', {class: 'bar ' + cls + (resolved ? ' resolved' : ''), 'data-seq': r.seq,
      x: x(t(r)), y: y, width: Math.max(4, x(end) - x(t(r))), height: 16, rx: 2}, svg);
    el('title', {}, bar).textContent = '#' + r.seq + ' ' + r.text + (o ? '\n#' + o.seq + ' ' + o.text : '\nin doubt');
    bar.addEventListener('click', () => select(r.seq)); }
  // Markers: Ray's terminal status and each deployment status the operator wrote.
  for (const r of records) { const b = r.body || {}; let cls = null, label = null;
    if (r.type === 'Observation' && b.observation === 'RayJobTerminal') { cls = 'marker-ray'; label = 'Ray: ' + b.status; }
    if (r.type === 'Observation' && b.observation === 'SubmissionSeen') { cls = 'marker-ray'; label = 'Ray: ' + b.status; }
    if (r.type === 'Intent' && b.action === 'WriteStatus' && b.status && b.status.jobDeploymentStatus !== undefined) {
      cls = 'marker-deploy'; label = 'deployment: ' + (b.status.jobDeploymentStatus || '""'); }
    if (!cls) continue;
    const m = el('circle', {class: 'marker ' + cls, 'data-seq': r.seq, cx: x(t(r)), cy: laneY[laneOf(r)] + 26, r: 3.5}, svg);
    el('title', {}, m).textContent = label + ' (#' + r.seq + ')'; m.addEventListener('click', () => select(r.seq)); }
  document.body.setAttribute('data-rendered', all.length);
})();
</script></body></html>
)HTML";

std::string htmlEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

void writeTimelineHtml(const std::string& title, const json& records, std::ostream& out,
                       const std::string& lanes) {
  std::string page = kPage;
  // "</" inside the embedded JSON would end its script element: escape the slash.
  std::string data = records.dump();
  for (size_t at = 0; (at = data.find("</", at)) != std::string::npos; at += 3)
    data.replace(at, 2, "<\\/");
  for (size_t at; (at = page.find("__TITLE__")) != std::string::npos;)
    page.replace(at, 9, htmlEscaped(title));
  page.replace(page.find("__LANES__"), 9, lanes == "object" ? "object" : "attempt");
  page.replace(page.find("__DATA__"), 8, data);
  out << page;
}

}  // namespace rayjournal::replay
