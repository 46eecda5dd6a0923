// The job page served at `/` (roles/job/job_page.h); docs/job-page.md.
#include "roles/job/job_page.h"

namespace edl::roles::job {

const char kJobPageHtml[] = R"edlpage(
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edl job</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { background: #1d2330; color: #fff; padding: 12px 20px; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 20px; margin: 0; }
  .badge { padding: 2px 10px; border-radius: 10px; background: #56607a; font-weight: 600; }
  .badge.running { background: #2e7d32; } .badge.failed { background: #c62828; }
  .badge.succeeded { background: #1565c0; } .badge.stopping, .badge.stopped { background: #ef6c00; }
  #updated { color: #b8c0d0; margin-left: auto; }
  main { padding: 12px 20px; max-width: 1400px; }
  section { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  .facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 6px 18px; }
  .facts div span { color: #5a6275; display: block; font-size: 12px; }
  .bar { height: 12px; background: #e4e7ed; border-radius: 6px; overflow: hidden; margin: 8px 0 2px; }
  .bar div { height: 100%; background: #2e7d32; width: 0; }
  #charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 12px; }
  .chart h3 { font-size: 13px; margin: 0 0 4px; font-weight: 600; }
  .chart svg { width: 100%; height: 160px; background: #fbfbfd; border: 1px solid #eceef2; }
  .chart polyline { fill: none; stroke: #1565c0; stroke-width: 1.5; }
  .chart text { font-size: 10px; fill: #5a6275; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceef2; white-space: nowrap; }
  th { color: #5a6275; font-weight: 600; }
  .empty { color: #8a92a5; font-style: italic; }
  #error { color: #c62828; font-weight: 600; }
  .controls { float: right; font-size: 12px; }
</style>
</head>
<body>
<header><h1 id="job">edl job</h1><span id="state" class="badge">loading</span>
  <span id="strategy"></span><span id="updated"></span></header>
<main>
<p id="error"></p>
<section id="summary"><h2>Progress</h2>
  <div class="facts" id="facts"></div>
  <div class="bar"><div id="progress"></div></div>
  <div id="progress-text"></div>
</section>
<section><h2>Curves <span class="controls">x axis:
  <label><input type="radio" name="x" value="step" checked> model version</label>
  <label><input type="radio" name="x" value="time"> time</label></span></h2>
  <div id="charts"><p class="empty">no scalars yet</p></div></section>
<section><h2>Workers</h2><div id="workers"></div></section>
<section><h2>Parameter servers</h2><div id="ps"></div></section>
<section><h2>Ring</h2><div id="ring"></div></section>
<section><h2>Data ledger (per epoch)</h2><div id="ledger"></div></section>
<section><h2>Evaluations</h2><div id="evaluations"></div></section>
<section><h2>Incidents</h2><div id="incidents"></div></section>
<section><h2>Checkpoint incidents</h2><div id="checkpoint_incidents"></div></section>
</main>
<script>
"use strict";
// The job secret comes in the URL fragment (#token=...), which the browser
// never sends to the server; requests carry it as a bearer token.
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const headers = token ? { "Authorization": "Bearer " + token } : {};
const $ = id => document.getElementById(id);
let xAxis = "step";
const progressSamples = [];  // [seconds, records] for the rate and ETA
let lastSeries = null;

function esc(v) {
  return String(v).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
    '"': "&quot;", "'": "&#39;" }[c]));
}
function fmt(v) {
  if (typeof v === "number") {
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4);
  }
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return Array.isArray(v) ? v.length + " item(s)" : JSON.stringify(v);
  return String(v);
}
function duration(s) {
  if (!isFinite(s) || s < 0) return "?";
  s = Math.round(s);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return (h ? h + "h " : "") + (h || m ? m + "m " : "") + sec + "s";
}
// A table of objects: columns are `cols` (key, title) or every key seen.
function table(id, rows, cols) {
  const el = $(id);
  if (!rows || rows.length === 0) { el.innerHTML = '<p class="empty">none</p>'; return; }
  if (!cols) {
    const keys = [];
    rows.forEach(r => Object.keys(r).forEach(k => { if (!keys.includes(k)) keys.push(k); }));
    cols = keys.map(k => [k, k.replace(/_/g, " ")]);
  }
  let html = "<table><tr>" + cols.map(c => "<th>" + esc(c[1]) + "</th>").join("") + "</tr>";
  for (const r of rows) {
    html += "<tr>" + cols.map(c => "<td>" + esc(fmt(typeof c[0] === "function" ? c[0](r) : r[c[0]])) +
                                  "</td>").join("") + "</tr>";
  }
  el.innerHTML = html + "</table>";
}

function chart(tag, points) {
  const w = 320, h = 160, left = 48, right = 8, top = 8, bottom = 20;
  const xs = points.map(p => xAxis === "step" ? p[0] : p[1]);
  const ys = points.map(p => p[2]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sx = x => left + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (w - left - right);
  const sy = y => top + (y1 > y0 ? (y1 - y) / (y1 - y0) : 0.5) * (h - top - bottom);
  const line = points.map((p, i) => sx(xs[i]).toFixed(1) + "," + sy(ys[i]).toFixed(1)).join(" ");
  const xl = v => xAxis === "step" ? fmt(v) : new Date(v * 1000).toLocaleTimeString("en-GB");
  return '<div class="chart" data-tag="' + esc(tag) + '" data-points="' + points.length + '"><h3>' +
    esc(tag) + " <small>(" + points.length + " points, last " + esc(fmt(ys[ys.length - 1])) +
    ')</small></h3><svg viewBox="0 0 ' + w + " " + h + '" preserveAspectRatio="none">' +
    '<text x="2" y="' + (top + 8) + '">' + esc(fmt(y1)) + "</text>" +
    '<text x="2" y="' + (h - bottom) + '">' + esc(fmt(y0)) + "</text>" +
    '<text x="' + left + '" y="' + (h - 6) + '">' + esc(xl(x0)) + "</text>" +
    '<text x="' + (w - right) + '" y="' + (h - 6) + '" text-anchor="end">' + esc(xl(x1)) + "</text>" +
    '<polyline points="' + line + '"/></svg></div>';
}
function drawCharts(series) {
  lastSeries = series;
  const tags = Object.keys(series.series || {}).filter(t => series.series[t].length > 0).sort();
  if (tags.length === 0) { $("charts").innerHTML = '<p class="empty">no scalars yet</p>'; return; }
  $("charts").innerHTML = tags.map(t => chart(t, series.series[t])).join("");
}
document.querySelectorAll('input[name="x"]').forEach(r => r.addEventListener("change", e => {
  xAxis = e.target.value;
  if (lastSeries) drawCharts(lastSeries);
}));

function drawStatus(s) {
  document.title = "edl job " + s.job;
  $("job").textContent = "edl job " + s.job;
  $("state").textContent = s.state;
  $("state").className = "badge " + s.state;
  $("strategy").textContent = s.ring ? "AllreduceStrategy" :
      (s.ps && s.ps.length ? "ParameterServerStrategy" : "");
  const ledger = s.ledger || [];
  const perEpoch = ledger.length ? ledger[0].records : 0;
  const total = perEpoch * (s.num_epochs || 0);
  const done = ledger.reduce((a, e) => a + e.trained, 0);
  // The rate: the master's latest samples/s, else what this page saw move.
  const now = Date.now() / 1000;
  progressSamples.push([now, done]);
  while (progressSamples.length > 2 && now - progressSamples[0][0] > 60) progressSamples.shift();
  const [t0, d0] = progressSamples[0];
  const speed = lastSeries && lastSeries.series && lastSeries.series["train/samples_per_second"];
  const rate = speed && speed.length ? speed[speed.length - 1][2]
                                     : (now > t0 ? (done - d0) / (now - t0) : 0);
  const fraction = total > 0 ? Math.min(1, done / total) : 0;
  $("progress").style.width = (100 * fraction).toFixed(1) + "%";
  $("progress-text").textContent = total > 0
      ? (100 * fraction).toFixed(1) + " % of " + fmt(total) + " records (" + s.num_epochs +
        " epoch(s))" + (rate > 0 && fraction < 1 ? ", " + fmt(Math.round(rate)) +
        " records/s, ETA " + duration((total - done) / rate) : "")
      : "no training data (evaluation or prediction job)";
  const facts = [
    ["epoch", (s.epoch || 0) + " / " + (s.num_epochs || 0)],
    ["model version", fmt(s.model_version)],
    ["records trained", fmt(s.records_trained_total)],
    ["workers", (s.workers || []).length + " alive, target " + s.workers_target],
    ["registrations / lost", s.workers_registered + " / " + s.workers_lost],
    ["tasks (training)", s.tasks && s.tasks.training ? "todo " + s.tasks.training.todo +
        ", doing " + s.tasks.training.doing + ", done " + s.tasks.training.done : ""],
    ["evaluations", fmt(s.evaluations_total)],
    ["master restarts", fmt(s.master_restarts)],
    ["records skipped", fmt(s.records_skipped)],
  ];
  if (s.reason) facts.push(["reason", s.reason]);
  $("facts").innerHTML = facts.map(f => "<div><span>" + esc(f[0]) + "</span>" + esc(f[1]) +
                                        "</div>").join("");
  table("workers", s.workers, [["name", "name"], ["id", "id (registration)"], ["pid", "pid"],
      ["state", "state"], [r => r.last_heartbeat_age_s.toFixed(1) + " s ago", "last heartbeat"],
      [r => duration(r.registered_age_s), "up"], ["tasks_done", "tasks done"],
      [r => r.tasks.map(t => t.type + " " + t.begin + "-" + t.end).join(", "), "leased"],
      ["num_threads", "threads"]]);
  table("ps", s.ps, [["name", "name"], ["address", "address"], ["num_threads", "threads"]]);
  $("ring").innerHTML = s.ring
      ? "version " + esc(s.ring.version) + ", " + esc(s.ring.size) + " member(s): " +
        s.ring.members.map(m => esc(m.name) + " (" + esc(m.address) + ")").join(", ")
      : '<p class="empty">no ring (not AllreduceStrategy, or not formed yet)</p>';
  // Epochs not started yet are counted, not listed; at most the last 50.
  // Records not trained yet are pending while the job runs; the master
  // calls them missing only once the job has ended.
  const started = ledger.filter(e => e.record_trainings > 0 || e.trained > 0);
  table("ledger", started.slice(-50), [["epoch", "epoch"], ["records", "records"],
      ["trained", "trained"], ["pending", "pending"], ["missing", "missing"],
      ["trained_more_than_once", "trained more than once"],
      ["record_trainings", "record trainings"], ["redone", "redone for a restored PS"]]);
  if (ledger.length > started.length) {
    $("ledger").insertAdjacentHTML("beforeend", '<p class="empty">' +
        (ledger.length - started.length) + " epoch(s) not started</p>");
  }
  // The epoch a round evaluated: the one whose end (or whose training
  // reports, with --evaluation_steps) started it.
  table("evaluations", (s.evaluations || []).map(e => Object.assign(
      { epoch: e.epoch, model_version: e.model_version },
      e.loss !== undefined ? { loss: e.loss } : {}, e.metrics || {})).reverse().slice(0, 50));
  table("incidents", s.incidents, [["worker", "worker"], ["cause", "cause"],
      [r => new Date(r.detected_unix_s * 1000).toISOString().slice(11, 19), "at (UTC)"],
      ["detection_s", "detection s"], ["to_request_s", "to request s"],
      ["pending_s", "pending s"], ["pending_reason", "pending reason"],
      ["to_step_s", "to first step s"], ["tasks_put_back", "tasks put back"],
      ["records_put_back", "records put back"]]);
  // A PS's failed periodic checkpoints, until one succeeds again.
  table("checkpoint_incidents", s.checkpoint_incidents, [["ps", "PS"],
      [r => new Date(r.detected_unix_s * 1000).toISOString().slice(11, 19), "at (UTC)"],
      ["last_good_version", "last good version"], ["first_failed_version", "first failed"],
      ["last_failed_version", "last failed"], ["failures", "failed attempts"],
      ["recovered_version", "good again at"], ["error", "error"]]);
}

async function get(path) {
  const r = await fetch(path, { headers, cache: "no-store" });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status + " " + (await r.text()));
  return r.json();
}
async function poll() {
  try {
    const [status, series] = await Promise.all([get("status"), get("series")]);
    drawCharts(series);
    drawStatus(status);
    $("error").textContent = "";
    $("updated").textContent = "updated " + new Date().toLocaleTimeString("en-GB");
    document.body.dataset.loaded = "true";
  } catch (e) {
    $("error").textContent = "cannot reach the master: " + e.message +
        (token ? "" : " (open the URL `edl dashboard JOB` prints: it carries #token=...)");
  }
  setTimeout(poll, 2000);
}
poll();
</script>
</body>
</html>
)edlpage";

}  // namespace edl::roles::job
