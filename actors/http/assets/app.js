// The dashboard: a client of the public API only (docs/API.md). It polls
// /api/v1/cluster and the selected experiment every couple of seconds, with
// only the units committed since the last poll (units?since=N), and steers
// through the same POST endpoints a program uses.
"use strict";

const state = {
  selected: null,      // experiment id
  highlighted: null,   // config id
  experiment: null,    // its last GET /api/v1/experiments/{id}
  units: [],
  curves: null,
  schedule: null,
  pollMs: Number(new URLSearchParams(location.search).get("poll")) || 2000,
};
window.cerebroCharts = {};

const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { "X-Cerebro-Request": "1" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) { location.href = "/login"; throw new Error("not logged in"); }
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
  return json;
}

function cell(row, content, className) {
  const td = row.insertCell();
  if (content instanceof Node) td.appendChild(content); else td.textContent = content;
  if (className) td.className = className;
  return td;
}

function progressBar(fraction) {
  const outer = document.createElement("span");
  outer.className = "progress";
  const inner = document.createElement("span");
  inner.style.width = `${Math.round(100 * Math.min(1, fraction))}%`;
  outer.appendChild(inner);
  return outer;
}

function say(text, isError) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "";
}

function formatParams(params) {
  return Object.entries(params || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ");
}

function renderCluster(cluster) {
  const agents = cluster.agents || [];
  const workers = agents.reduce((n, a) => n + a.workers, 0);
  const busy = agents.reduce((n, a) => n + (a.running || []).length, 0);
  $("cluster-summary").textContent = `${agents.length} agent(s), ${workers} worker(s), ${busy} busy`;
  const body = $("agents").tBodies[0];
  body.replaceChildren();
  for (const a of agents) {
    const row = body.insertRow();
    row.dataset.agent = a.name;
    cell(row, `${a.name} (${a.node})`);
    cell(row, String(a.workers));
    cell(row, a.speed.toFixed(1));
    cell(row, (a.running || []).join("; ") || "idle");
  }
  const list = $("experiments").tBodies[0];
  list.replaceChildren();
  for (const e of cluster.experiments || []) {
    const row = list.insertRow();
    row.dataset.experiment = e.id;
    if (e.id === state.selected) row.className = "selected";
    cell(row, `${e.name}\n`).appendChild(Object.assign(document.createElement("div"), { className: "muted", textContent: e.id }));
    cell(row, e.status);
    const p = cell(row, progressBar(e.progress));
    p.appendChild(document.createTextNode(` ${e.units_done}/${e.units_total}`));
    row.onclick = () => select(e.id);
  }
  if (!state.selected) {
    const first = cluster.latest || (cluster.experiments || [])[0]?.id;
    if (first) select(first);
  }
}

function renderWorkers(units) {
  // Utilisation per worker: seconds spent on committed units over the run so far.
  const end = Math.max(0, ...units.map((u) => u.end_s));
  // A worker is busy from dispatch to its result (worker_end_s): the commit
  // runs while it trains its next unit.
  const per = new Map();
  for (const u of units) {
    if (u.rolled_back) continue;
    const w = per.get(u.worker) || { units: 0, busy: 0 };
    w.units += 1;
    w.busy += (u.worker_end_s ?? u.end_s) - u.start_s;
    per.set(u.worker, w);
  }
  const body = $("workers").tBodies[0];
  body.replaceChildren();
  for (const [worker, w] of [...per.entries()].sort((a, b) => a[0] - b[0])) {
    const row = body.insertRow();
    cell(row, `worker ${worker}`);
    cell(row, String(w.units));
    cell(row, end > 0 ? `${(100 * w.busy / end).toFixed(0)}%` : "-");
  }
}

function renderExperiment() {
  const e = state.experiment;
  if (!e) return;
  $("experiment").hidden = false;
  $("experiment-title").textContent = `${e.name}  (${e.id})`;
  const best = e.best ? `best: config ${e.best.config}, ${e.metric} ${e.best.metric.toFixed(4)}` : "no config has validated yet";
  $("experiment-status").textContent = `${e.status}${e.paused ? " (paused)" : ""}: ${e.units_done} of ${e.units_total} units; ${best}${e.note ? "; " + e.note : ""}`;
  $("pause").disabled = e.status !== "running" || e.paused;
  $("resume").disabled = e.status !== "running" || !e.paused;
  $("metric-name").textContent = `by ${e.metric}`;
  $("spec").textContent = e.spec || "";
  const body = $("leaderboard").tBodies[0];
  body.replaceChildren();
  for (const c of e.configs || []) {
    const row = body.insertRow();
    row.dataset.config = c.config;
    if (c.config === state.highlighted) row.className = "highlight";
    cell(row, c.rank === null ? "-" : String(c.rank));
    const id = cell(row, "");
    id.appendChild(Object.assign(document.createElement("span"), { className: "swatch" })).style.background = CerebroCharts.colour(c.config);
    id.appendChild(document.createTextNode(String(c.config)));
    cell(row, c.status).className = "config-status";
    cell(row, c.metric === null ? "-" : c.metric.toFixed(4));
    cell(row, String(c.epochs.length));
    cell(row, formatParams(c.params), "params");
    const actions = cell(row, "");
    if (e.status === "running" && c.status === "running") {
      const stop = Object.assign(document.createElement("button"), { className: "stop", textContent: "Stop" });
      stop.dataset.config = c.config;
      stop.onclick = (ev) => { ev.stopPropagation(); steer(`configs/${c.config}/stop`, undefined, `config ${c.config} stopped`); };
      actions.appendChild(stop);
    }
    if (e.status === "running") {
      const clone = Object.assign(document.createElement("button"), { className: "clone", textContent: "Clone" });
      clone.dataset.config = c.config;
      clone.onclick = (ev) => { ev.stopPropagation(); openClone(c); };
      actions.appendChild(clone);
    }
    row.onclick = () => highlight(c.config);
  }
  renderPareto(e);
  renderExamples(e);
  drawCharts();
}

// A finished captioning or detection run: its best config on a few test images (the view's
// "examples"), each picture with its boxes drawn over it or its caption below it.
function renderExamples(e) {
  const examples = e.examples || [];
  $("examples-section").hidden = examples.length === 0;
  const box = $("examples");
  if (box.dataset.shown === e.id + ":" + examples.length) return;  // pictures do not change: draw once
  box.dataset.shown = e.id + ":" + examples.length;
  box.replaceChildren();
  const SVG = "http://www.w3.org/2000/svg";
  const svgElement = (name, attributes) => {
    const element = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    return element;
  };
  for (const x of examples) {
    const figure = document.createElement("figure");
    const svg = svgElement("svg", { viewBox: `0 0 ${x.width} ${x.height}`, width: 192, height: Math.round(192 * x.height / x.width) });
    svg.appendChild(svgElement("image", { href: x.image, width: x.width, height: x.height, preserveAspectRatio: "none", style: "image-rendering:pixelated" }));
    const rectangle = (b, kind) => {
      const r = svgElement("rect", { class: kind, x: b.x, y: b.y, width: b.width, height: b.height });
      r.appendChild(svgElement("title", {})).textContent = b.label + (b.score === undefined ? "" : ` ${b.score.toFixed(2)}`);
      svg.appendChild(r);
    };
    for (const b of x.truth || []) rectangle(b, "truth");
    for (const b of x.boxes || []) rectangle(b, "found");
    figure.appendChild(svg);
    const caption = document.createElement("figcaption");
    if (x.caption !== undefined) {
      caption.appendChild(document.createElement("b")).textContent = x.caption;
      for (const r of x.references || []) {
        caption.appendChild(document.createElement("br"));
        caption.appendChild(Object.assign(document.createElement("span"), { className: "muted", textContent: r }));
      }
    } else {
      caption.textContent = (x.boxes || []).map((b) => `${b.label} ${b.score.toFixed(2)}`).join(", ") || "no box";
    }
    figure.appendChild(caption);
    box.appendChild(figure);
  }
}

// Several objectives: the experiment view's Pareto front, one row
// per config on it, one column per objective measured so far.
function renderPareto(e) {
  const objectives = (e.pareto_objectives || []).filter((o) => o.live);
  $("pareto-section").hidden = objectives.length < 2;
  if (objectives.length < 2) return;
  const later = (e.pareto_objectives || []).filter((o) => !o.live).map((o) => o.name);
  $("pareto-note").textContent = (e.pareto_final ? "" : "so far") + (later.length ? `; ${later.join(", ")} when the run ends` : "");
  const head = $("pareto").tHead.rows[0];
  head.replaceChildren();
  for (const name of ["config", ...objectives.map((o) => `${o.name} (${o.direction === "maximize" ? "max" : "min"})`)])
    head.appendChild(Object.assign(document.createElement("th"), { textContent: name }));
  const body = $("pareto").tBodies[0];
  body.replaceChildren();
  for (const p of e.pareto) {
    const row = body.insertRow();
    row.dataset.config = p.config;
    cell(row, String(p.config));
    // One rule per column (the API's "decimals": 4 significant digits of the
    // column's largest value, parameters as integers), right-aligned.
    for (const o of objectives) cell(row, formatObjective(p.values[o.name], o.decimals), "number");
    row.onclick = () => highlight(p.config);
  }
}

function formatObjective(value, decimals) {
  const v = Number(value);
  return Number.isFinite(v) ? v.toFixed(Number.isInteger(decimals) ? decimals : 4) : "-";
}

function drawCharts() {
  const e = state.experiment;
  if (!e) return;
  if (!state.curves) state.curves = CerebroCharts.makeCurves($("curves"), highlight);
  if (!state.schedule) state.schedule = CerebroCharts.makeSchedule($("schedule"), highlight);
  CerebroCharts.updateCurves(state.curves, e.configs || [], $("curve-series").value, e.metric, state.highlighted);
  CerebroCharts.updateSchedule(state.schedule, state.units, state.highlighted, (e.configs || []).map((c) => c.config));
  const parallel = CerebroCharts.drawParallel($("parallel"), e.configs || [], e.metric, state.highlighted, highlight);
  window.cerebroCharts = { curves: state.curves, schedule: state.schedule, parallel };
}

function highlight(config) {
  state.highlighted = state.highlighted === config ? null : config;
  renderExperiment();
}

function openClone(c) {
  $("clone-form").hidden = false;
  $("clone-form").dataset.config = c.config;
  $("clone-parent").textContent = String(c.config);
  $("clone-params").value = JSON.stringify(c.params, null, 1);
}

async function steer(path, body, done) {
  try {
    await api("POST", `/api/v1/experiments/${encodeURIComponent(state.selected)}/${path}`, body);
    say(done);
    await poll();
  } catch (err) {
    say(err.message, true);
  }
}

function select(id) {
  if (state.selected !== id) {
    state.selected = id;
    state.highlighted = null;
    state.experiment = null;
    state.units = [];
  }
  poll();
}

// Appends the units committed since the last poll to state.units: the
// answer carries the log's count, and a count below what we hold means the
// log was rolled back (a damaged state was recovered), so all are read again.
// Not yet readable (an experiment setting up): the units stay as they are.
async function fetchNewUnits(selected) {
  const path = `/api/v1/experiments/${encodeURIComponent(selected)}/units`;
  try {
    const known = state.units.length;
    window.cerebroUnits = { since: known };  // what the last poll asked for (the browser test reads it)
    let answer = await api("GET", `${path}?since=${known}`);
    let fresh = known === 0 ? [] : state.units;
    if (answer.count < known) {
      answer = await api("GET", path);
      fresh = [];
    }
    // Another experiment was selected meanwhile: these units are not its.
    if (state.selected !== selected) return;
    state.units = fresh.concat(answer.units || []);
  } catch (err) {
    if (err.message === "not logged in") throw err;
  }
}

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    const cluster = await api("GET", "/api/v1/cluster");
    renderCluster(cluster);
    if (state.selected) {
      const id = encodeURIComponent(state.selected);
      const [experiment] = await Promise.all([api("GET", `/api/v1/experiments/${id}`), fetchNewUnits(state.selected)]);
      state.experiment = experiment;
      renderWorkers(state.units);
      renderExperiment();
    }
    $("connection").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    $("connection").textContent = `cannot reach the server: ${err.message}`;
  } finally {
    polling = false;
  }
}

$("pause").onclick = () => steer("pause", undefined, "paused: running units finish, no new unit starts");
$("resume").onclick = () => steer("resume", undefined, "resumed");
$("curve-series").onchange = drawCharts;
$("clone-cancel").onclick = () => { $("clone-form").hidden = true; };
$("clone-form").onsubmit = (ev) => {
  ev.preventDefault();
  let params;
  try { params = JSON.parse($("clone-params").value); } catch (err) { return say(`the parameters are not JSON: ${err.message}`, true); }
  const parent = $("clone-form").dataset.config;
  $("clone-form").hidden = true;
  steer(`configs/${parent}/clone`, { params }, `cloned config ${parent}`);
};
poll();
setInterval(poll, state.pollMs);
