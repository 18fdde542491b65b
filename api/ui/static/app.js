// kgctx explorer: every datum comes from the API with the token the
// person pasted, kept in sessionStorage (this tab only). Server strings
// reach the page through textContent and setAttribute only.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const TOKEN_KEY = "kgctx.token";
let me = null; // whoami

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// api calls a route with the token; errors become APIError with the
// server's code and message.
async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + sessionStorage.getItem(TOKEN_KEY) };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
  if (!res.ok) {
    const e = (data && data.error) || {};
    if (res.status === 401) logout("the server refused the token: " + (e.message || res.statusText));
    throw new APIError(res.status, e.code || "http_" + res.status, e.message || text || res.statusText);
  }
  return data;
}

function showError(where, err) {
  $(where).textContent = err ? (err.code ? err.code + " (HTTP " + err.status + "): " : "") + err.message : "";
}

function org() { return me.orgId; }
function project() {
  return me.projectIds.length ? $("project").value : $("project-text").value.trim();
}
function projectPath() {
  return "/v1/orgs/" + encodeURIComponent(org()) + "/projects/" + encodeURIComponent(project());
}

async function login(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    me = await api("GET", "/v1/whoami");
  } catch (err) {
    sessionStorage.removeItem(TOKEN_KEY);
    showError("login-error", err);
    return;
  }
  showError("login-error", null);
  $("who-text").textContent = me.agentId + " · " + me.orgId + " · " + me.role;
  const sel = $("project");
  sel.replaceChildren();
  for (const p of me.projectIds) sel.append(el("option", { value: p }, p));
  sel.hidden = me.projectIds.length === 0;
  $("project-text").hidden = me.projectIds.length !== 0;
  $("login").hidden = true;
  $("who").hidden = false;
  $("app").hidden = false;
}

function logout(why) {
  sessionStorage.removeItem(TOKEN_KEY);
  me = null;
  $("app").hidden = true;
  $("who").hidden = true;
  $("login").hidden = false;
  $("result").hidden = true;
  $("token").value = "";
  showError("login-error", why ? { message: why } : null);
}

function switchView(name) {
  for (const b of document.querySelectorAll("button.tab")) b.classList.toggle("active", b.dataset.view === name);
  for (const v of ["query", "work", "stats"]) $("view-" + v).hidden = v !== name;
  $("result").hidden = name === "stats" || !$("block").textContent;
  if (name === "stats") loadStats();
}

const fmt = (x) => (typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(3)) : "");

// showBlock renders a block, its lines' score parts and the subgraph.
function showBlock(block, triplets, meta) {
  showError("error", null);
  $("result").hidden = false;
  $("block").textContent = block || "(empty block: nothing relevant, or nothing this token may read)";
  $("block-meta").textContent = meta;
  const tb = document.querySelector("#lines tbody");
  tb.replaceChildren();
  triplets.forEach((t, i) => {
    const x = t.explain || {};
    const tr = el("tr");
    tr.append(el("td", { class: "num" }, String(i + 1)),
      el("td", {}, t.sourceEntity + " → " + t.relationship + " → " + t.targetEntity),
      el("td", { class: "num" }, fmt(x.importance)), el("td", {}, x.seed || ""), el("td", { class: "num" }, fmt(x.hop)),
      el("td", { class: "num" }, fmt(x.seedScore)), el("td", { class: "num" }, fmt(x.queryMatch)), el("td", { class: "num" }, fmt(x.hub)),
      el("td", { class: "num" }, fmt(x.weight)), el("td", { class: "num" }, fmt(x.spread)));
    tb.append(tr);
  });
  draw(triplets);
  $("node").hidden = true;
}

// draw lays the block's triplets out as rings: the seeds at the centre,
// a node at the ring of its distance (in the block's triplets) from the
// nearest seed; a line's thickness grows with its importance.
function draw(triplets) {
  const g = $("graph");
  g.replaceChildren();
  const nodes = new Map(); // id -> {id, name, ring, seed}
  const adj = new Map();
  const add = (id, name) => {
    if (!nodes.has(id)) { nodes.set(id, { id, name, ring: Infinity, seed: false }); adj.set(id, []); }
  };
  for (const t of triplets) {
    add(t.sourceNodeId, t.sourceEntity);
    add(t.targetNodeId, t.targetEntity);
    adj.get(t.sourceNodeId).push(t.targetNodeId);
    adj.get(t.targetNodeId).push(t.sourceNodeId);
  }
  const queue = [];
  for (const t of triplets) {
    const s = t.explain && t.explain.seedNodeId;
    if (s && nodes.has(s) && !nodes.get(s).seed) { nodes.get(s).seed = true; nodes.get(s).ring = 0; queue.push(s); }
  }
  if (!queue.length && triplets.length) { // no explain: the first line's source
    const s = nodes.get(triplets[0].sourceNodeId); s.seed = true; s.ring = 0; queue.push(s.id);
  }
  while (queue.length) {
    const id = queue.shift();
    for (const o of adj.get(id)) {
      const n = nodes.get(o);
      if (n.ring === Infinity) { n.ring = nodes.get(id).ring + 1; queue.push(o); }
    }
  }
  const rings = new Map();
  let maxRing = 0;
  for (const n of nodes.values()) {
    if (n.ring === Infinity) n.ring = 1;
    maxRing = Math.max(maxRing, n.ring);
    if (!rings.has(n.ring)) rings.set(n.ring, []);
    rings.get(n.ring).push(n);
  }
  const step = maxRing ? 330 / maxRing : 0;
  for (let r = 1; r <= maxRing; r++) g.append(svg("circle", { class: "ring", cx: 0, cy: 0, r: r * step }));
  for (const [r, ns] of rings) {
    const radius = r === 0 ? (ns.length > 1 ? Math.min(60, step / 2) : 0) : r * step;
    ns.forEach((n, i) => {
      const a = (2 * Math.PI * i) / ns.length - Math.PI / 2 + r * 0.35;
      n.x = radius * Math.cos(a);
      n.y = radius * Math.sin(a);
    });
  }
  const maxImp = Math.max(1e-9, ...triplets.map((t) => (t.explain ? t.explain.importance : 1 - t.relevanceScore)));
  for (const t of triplets) {
    const a = nodes.get(t.sourceNodeId), b = nodes.get(t.targetNodeId);
    const imp = t.explain ? t.explain.importance : 1 - t.relevanceScore;
    const line = svg("line", { class: "edge", x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": (1 + 6 * imp / maxImp).toFixed(2) });
    line.append(svg("title", {}, t.sourceEntity + " → " + t.relationship + " → " + t.targetEntity + " (importance " + fmt(imp) + ")"));
    g.append(line);
    g.append(svg("text", { class: "rel", x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, "text-anchor": "middle" }, t.relationship));
  }
  for (const n of nodes.values()) {
    const grp = svg("g", { class: "node" + (n.seed ? " seed" : ""), "data-id": n.id, transform: "translate(" + n.x.toFixed(1) + " " + n.y.toFixed(1) + ")" });
    grp.append(svg("circle", { r: n.seed ? 11 : 8 }));
    grp.append(svg("text", { x: 13, y: 4 }, n.name.length > 28 ? n.name.slice(0, 27) + "…" : n.name));
    grp.append(svg("title", {}, n.name + (n.seed ? " (seed)" : " (hop " + n.ring + ")")));
    grp.addEventListener("click", () => showNode(n.id, grp));
    g.append(grp);
  }
}

// showNode opens a node's panel: its facts and its edges both ways.
async function showNode(id, grp) {
  for (const s of document.querySelectorAll("svg .node.selected")) s.classList.remove("selected");
  if (grp) grp.classList.add("selected");
  try {
    const n = await api("GET", projectPath() + "/nodes/" + encodeURIComponent(id));
    $("node").hidden = false;
    $("node-name").textContent = n.name;
    const dl = $("node-facts");
    dl.replaceChildren();
    const fact = (k, v) => { if (v !== undefined && v !== "") dl.append(el("dt", {}, k), el("dd", {}, String(v))); };
    fact("type", n.type);
    fact("description", n.description);
    fact("weight", fmt(n.weight));
    fact("aliases", (n.aliases || []).join(", "));
    fact("id", n.id);
    fact("updated", n.updatedAt);
    const ul = $("node-edges");
    ul.replaceChildren();
    for (const side of ["subject", "object"]) {
      const q = new URLSearchParams({ [side]: n.name, limit: "50" });
      const r = await api("GET", projectPath() + "/graph/triplets?" + q);
      for (const t of r.triplets) {
        let text = t.source + " → " + t.relationship + " → " + t.target + "  (weight " + fmt(t.weight) + ")";
        for (const p of t.provenance || []) {
          text += "  [" + [p.sessionId && "session " + p.sessionId, p.observationId && "observation " + p.observationId, p.timestamp].filter(Boolean).join(", ") + "]";
        }
        ul.append(el("li", { class: "edge-item" }, text));
      }
    }
    if (!ul.children.length) ul.append(el("li", {}, "no edges this token may read"));
  } catch (err) {
    showError("error", err);
  }
}

async function runQuery(ev) {
  ev.preventDefault();
  try {
    const r = await api("POST", "/v1/context/graph", {
      scope: { orgId: org(), projectId: project() }, queryText: $("query").value,
      budgetTokens: Number($("budget").value), topK: Number($("topk").value), neighborhoodDepth: Number($("depth").value), explain: true,
    });
    showBlock(r.block, r.triplets || [], r.actualTokens + " tokens · " + r.seeds + " seeds · " + r.candidates + " candidates · " + r.denied + " denied");
  } catch (err) {
    showError("error", err);
  }
}

async function runWork(ev) {
  ev.preventDefault();
  const rand = new Uint32Array(2);
  crypto.getRandomValues(rand);
  try {
    const r = await api("POST", "/v1/context/session", {
      sessionId: "explorer-" + rand[0].toString(16) + rand[1].toString(16), orgId: org(), projectId: project(),
      workType: $("worktype").value, workItem: { title: $("work-title").value, description: $("work-desc").value }, explain: true,
    });
    const ts = (r.explain && r.explain.triplets) || [];
    showBlock(r.block, ts, r.actualTokens + " of " + r.budgetTokens + " tokens · " + (r.observationIds || []).length + " observations");
  } catch (err) {
    showError("error", err);
  }
}

async function loadStats() {
  const box = $("stats");
  box.replaceChildren();
  try {
    const st = await api("GET", projectPath() + "/graph/stats");
    box.append(el("p", { id: "stats-total" }, st.nodes + " nodes, " + st.triplets + " triplets in " + project()));
    const rows = Object.entries(st.predicates || {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const max = Math.max(1, ...rows.map((r) => r[1]));
    const h = 22;
    const s = svg("svg", { viewBox: "0 0 900 " + (rows.length * h + 10), role: "img", "aria-label": "triplets per relationship" });
    rows.forEach(([rel, n], i) => {
      const y = 5 + i * h;
      s.append(svg("text", { x: 250, y: y + 15, "text-anchor": "end" }, rel));
      s.append(svg("rect", { class: "bar", x: 260, y: y + 3, height: h - 6, width: Math.max(1, (560 * n) / max) }));
      s.append(svg("text", { x: 266 + (560 * n) / max, y: y + 15 }, String(n)));
    });
    box.append(s);
  } catch (err) {
    showError("error", err);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (ev) => { ev.preventDefault(); login($("token").value.trim()); });
  $("logout").addEventListener("click", () => logout());
  $("query-form").addEventListener("submit", runQuery);
  $("work-form").addEventListener("submit", runWork);
  for (const b of document.querySelectorAll("button.tab")) b.addEventListener("click", () => switchView(b.dataset.view));
  $("project").addEventListener("change", () => { if (!$("view-stats").hidden) loadStats(); });
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) login(saved);
});
