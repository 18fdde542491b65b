// kgctx explorer: every datum comes from the API with the token the
// person pasted, kept in sessionStorage (this tab only). Server strings
// reach the page through textContent and setAttribute only.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const TOKEN_KEY = "kgctx.token";
let me = null; // whoami
let drawn = null; // the triplets drawn, laid out again when the panel's size changes
let selected = null; // the id of the node whose panel is open

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
  return $("project").hidden ? $("project-text").value.trim() : $("project").value;
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
  if (!(await loadProjects())) return;
  $("login").hidden = true;
  $("who").hidden = false;
  $("app").hidden = false;
}

// loadProjects fills the project picker with the org's projects and
// their sizes (GET /v1/orgs/{org}/projects), those the token may read;
// on a server without that route (404), or when it refuses, with the
// token's own projects. With none to list, a text box takes any project
// id. False when the token was refused meanwhile.
async function loadProjects() {
  const mine = me.projectIds || [];
  const opts = new Map(); // projectId -> label
  try {
    const r = await api("GET", "/v1/orgs/" + encodeURIComponent(org()) + "/projects");
    for (const p of (r && r.projects) || []) {
      if (!mine.length || mine.includes(p.projectId)) opts.set(p.projectId, p.projectId + " (" + p.nodes + " nodes)");
    }
  } catch (err) {
    if (err.status === 401) return false;
  }
  for (const p of mine) if (!opts.has(p)) opts.set(p, p);
  const sel = $("project");
  sel.replaceChildren();
  for (const id of [...opts.keys()].sort()) sel.append(el("option", { value: id }, opts.get(id)));
  sel.hidden = opts.size === 0;
  $("project-text").hidden = opts.size !== 0;
  return true;
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
      el("td", { class: "name" }, t.sourceEntity + " → " + t.relationship + " → " + t.targetEntity),
      el("td", { class: "num" }, fmt(x.importance)), el("td", { class: "seed" }, x.seed || ""), el("td", { class: "num" }, fmt(x.hop)),
      el("td", { class: "num" }, fmt(x.seedScore)), el("td", { class: "num" }, fmt(x.queryMatch)), el("td", { class: "num" }, fmt(x.hub)),
      el("td", { class: "num" }, fmt(x.weight)), el("td", { class: "num" }, fmt(x.spread)));
    tb.append(tr);
  });
  selected = null;
  $("node").hidden = true;
  draw(triplets);
}

// draw lays the block's triplets out at the drawing's own size in px:
// the seeds on a small ring in the middle (a lone seed at the centre), a
// node on the ring of its distance (in the block's triplets) from the
// nearest seed, near its neighbours on the ring within; a line's
// thickness grows with its importance. A node's label goes beside it,
// away from the centre where there is room, where it meets no other
// label and no node, shortened if it must be (the node's tooltip names
// it whole); a relationship's label goes along its line where there is
// room, else only in the line's tooltip.
function draw(triplets) {
  drawn = triplets;
  const g = $("graph");
  const W = g.clientWidth, H = g.clientHeight;
  if (!W || !H) return; // hidden: drawn again once shown
  g.replaceChildren();
  g.setAttribute("viewBox", -W / 2 + " " + -H / 2 + " " + W + " " + H);
  const nodes = new Map(); // id -> {id, name, ring, seed, x, y, a, rad}
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
  let maxRing = 0;
  for (const n of nodes.values()) {
    if (n.ring === Infinity) n.ring = 1;
    maxRing = Math.max(maxRing, n.ring);
  }
  const rings = Array.from({ length: maxRing + 1 }, () => []);
  for (const n of nodes.values()) rings[n.ring].push(n);

  const R = Math.max(40, Math.min(W, H) / 2 - 28); // the outer ring
  const n0 = rings[0].length;
  const r0 = n0 < 2 ? 0 : Math.min(maxRing ? 0.3 * R : 0.7 * R, 16 + 10 * n0);
  const radius = (r) => (r === 0 ? r0 : r0 + ((R - r0) * r) / maxRing);
  rings.forEach((ns, r) => {
    let off = -Math.PI / 2 + 0.3;
    if (r > 0) { // each near its neighbours within, the ring turned to suit them best
      for (const n of ns) {
        let sx = 0, sy = 0;
        for (const o of adj.get(n.id)) {
          const m = nodes.get(o);
          if (m.ring === r - 1) { sx += Math.cos(m.a); sy += Math.sin(m.a); }
        }
        n.want = Math.atan2(sy, sx);
      }
      ns.sort((a, b) => a.want - b.want);
      let sx = 0, sy = 0;
      ns.forEach((n, i) => { const d = n.want - (2 * Math.PI * i) / ns.length; sx += Math.cos(d); sy += Math.sin(d); });
      off = Math.atan2(sy, sx);
    }
    ns.forEach((n, i) => {
      n.a = off + (2 * Math.PI * i) / ns.length;
      n.x = radius(r) * Math.cos(n.a);
      n.y = radius(r) * Math.sin(n.a);
      n.rad = n.seed ? 10 : 7;
    });
  });

  if (r0) g.append(svg("circle", { class: "ring", cx: 0, cy: 0, r: r0 }));
  for (let r = 1; r <= maxRing; r++) g.append(svg("circle", { class: "ring", cx: 0, cy: 0, r: radius(r) }));
  const maxImp = Math.max(1e-9, ...triplets.map((t) => (t.explain ? t.explain.importance : 1 - t.relevanceScore)));
  for (const t of triplets) {
    const a = nodes.get(t.sourceNodeId), b = nodes.get(t.targetNodeId);
    const imp = t.explain ? t.explain.importance : 1 - t.relevanceScore;
    const line = svg("line", { class: "edge", x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": (1 + 6 * imp / maxImp).toFixed(2) });
    line.append(svg("title", {}, t.sourceEntity + " → " + t.relationship + " → " + t.targetEntity + " (importance " + fmt(imp) + ")"));
    g.append(line);
  }
  const rels = svg("g");
  g.append(rels);

  // Boxes taken, in the drawing's px: the nodes, then each label placed.
  const taken = [...nodes.values()].map((n) => ({ x: n.x - n.rad, y: n.y - n.rad, w: 2 * n.rad, h: 2 * n.rad }));
  const GAP = 2;
  const free = (b) => b.x >= -W / 2 + GAP && b.y >= -H / 2 + GAP && b.x + b.w <= W / 2 - GAP && b.y + b.h <= H / 2 - GAP &&
    taken.every((o) => b.x + b.w + GAP <= o.x || o.x + o.w + GAP <= b.x || b.y + b.h + GAP <= o.y || o.y + o.h + GAP <= b.y);
  const cut = (name, k) => (name.length > k ? name.slice(0, k - 1) + "…" : name);
  // A label's places around its node, each at an angle: the ones nearest
  // the direction away from the centre are tried first.
  const places = [
    [0, (w, h, d) => [d, -h / 2]], [Math.PI / 4, (w, h, d) => [0.7 * d, 0.7 * d]], [Math.PI / 2, (w, h, d) => [-w / 2, d]],
    [3 * Math.PI / 4, (w, h, d) => [-0.7 * d - w, 0.7 * d]], [Math.PI, (w, h, d) => [-d - w, -h / 2]],
    [-3 * Math.PI / 4, (w, h, d) => [-0.7 * d - w, -0.7 * d - h]], [-Math.PI / 2, (w, h, d) => [-w / 2, -d - h]],
    [-Math.PI / 4, (w, h, d) => [0.7 * d, -0.7 * d - h]],
  ];
  const turn = (a, b) => Math.abs(Math.atan2(Math.sin(a - b), Math.cos(a - b)));
  const order = [...nodes.values()].sort((a, b) => a.ring - b.ring);
  for (const n of order) {
    const grp = svg("g", { class: "node" + (n.seed ? " seed" : "") + (n.id === selected ? " selected" : ""), "data-id": n.id,
      transform: "translate(" + n.x.toFixed(1) + " " + n.y.toFixed(1) + ")" });
    grp.append(svg("circle", { r: n.rad }));
    const text = svg("text", { x: 0, y: 0 });
    grp.append(text);
    grp.append(svg("title", {}, n.name + (n.seed ? " (seed)" : " (hop " + n.ring + ")")));
    grp.addEventListener("click", () => showNode(n.id, grp));
    g.append(grp);
    const out = n.x || n.y ? Math.atan2(n.y, n.x) : 0;
    const tries = places.slice().sort((p, q) => turn(p[0], out) - turn(q[0], out));
    let best = null;
    for (const k of [24, 16, 10]) {
      text.textContent = cut(n.name, k);
      const bb = text.getBBox();
      for (const [, at] of tries) {
        const [dx, dy] = at(bb.width, bb.height, n.rad + 4);
        const b = { x: n.x + dx, y: n.y + dy, w: bb.width, h: bb.height, bb };
        if (!best) best = b;
        if (free(b)) { best = b; break; }
      }
      if (free(best)) break;
    }
    if (!free(best)) { text.textContent = cut(n.name, 24); } // nowhere free: the first place
    text.setAttribute("x", (best.x - n.x - best.bb.x).toFixed(1));
    text.setAttribute("y", (best.y - n.y - best.bb.y).toFixed(1));
    taken.push(best);
  }
  for (const t of triplets) {
    const a = nodes.get(t.sourceNodeId), b = nodes.get(t.targetNodeId);
    const text = svg("text", { class: "rel", x: 0, y: 0 }, t.relationship);
    rels.append(text);
    const bb = text.getBBox();
    const at = [0.5, 0.38, 0.62, 0.28, 0.72].map((f) => ({
      x: a.x + (b.x - a.x) * f - bb.width / 2, y: a.y + (b.y - a.y) * f - bb.height / 2, w: bb.width, h: bb.height,
    })).find(free);
    if (!at) { text.remove(); continue; }
    text.setAttribute("x", (at.x - bb.x).toFixed(1));
    text.setAttribute("y", (at.y - bb.y).toFixed(1));
    taken.push(at);
  }
}

// showNode opens a node's panel: its facts and its edges both ways.
async function showNode(id, grp) {
  for (const s of document.querySelectorAll("svg .node.selected")) s.classList.remove("selected");
  if (grp) grp.classList.add("selected");
  selected = id;
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
  // A new size for the drawing (the window's, or shown again): lay it out anew.
  let size = "";
  new ResizeObserver(() => {
    const g = $("graph"), now = g.clientWidth + "x" + g.clientHeight;
    if (now !== size && drawn) requestAnimationFrame(() => draw(drawn));
    size = now;
  }).observe($("graph"));
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) login(saved);
});
