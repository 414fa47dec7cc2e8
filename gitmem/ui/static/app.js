// gitmem ui: the map of the memories, a memory with its review, the agent sessions. Plain JavaScript, no build.
// Data: the JSON API of gitmem/ui/server.py (shapes in gitmem/shapes.py). Text is always set as text; only
// the highlighted code (Pygments' HTML, escaped on the server) is set as HTML.
"use strict";

const PAGE = 50;               // list items rendered per page ("more" renders the next)
const POLL_MS = 2000;          // how often the page asks whether anything changed (/api/version)
const ORDER = ["deleted", "stale", "moved", "unchecked", "fresh"];  // worst first: a node's colour
const NO_FILE = "(no file)";   // memories anchored to commits only, or to nothing

const state = {
  memories: [], byId: new Map(), version: null, tree: null, expanded: new Set([""]), selected: null,
  list: [], listTitle: "", shown: 0, search: null, current: null, view: "map", session: null,
  timings: {},
};
window.gitmem = state;  // for the tests and the benchmark (timings)

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

function fill(node, ...children) {
  // replaceChildren without the nulls and with arrays spread (conditional parts of a view)
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const r = await fetch(path, opts);
  const data = await r.json().catch(() => ({error: `HTTP ${r.status}`, hint: ""}));
  if (!r.ok) throw new Error(data.error + (data.hint ? ` — ${data.hint}` : ""));
  return data;
}

function toast(text, error) {
  const t = $("toast");
  t.textContent = text;
  t.className = error ? "error" : "";
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, error ? 8000 : 3500);
}

const short = (sha) => (sha || "").slice(0, 10);
const day = (t) => new Date(t * 1000).toISOString().slice(0, 10);
const stamp = (s) => (s || "").replace("T", " ").replace("Z", "");

function ageDays(m) {
  const t = Date.parse(m.updated || m.created || "");
  return Number.isNaN(t) ? null : (Date.now() - t) / 86400000;
}

// -- filters ---------------------------------------------------------------------------------------

function filters() {
  return {type: $("f-type").value, scope: $("f-scope").value, author: $("f-author").value,
          age: $("f-age").value, status: $("f-status").value};
}

function passes(m, f) {
  if (f.type && m.type !== f.type) return false;
  if (f.scope && m.scope !== f.scope) return false;
  if (f.author && m.author !== f.author) return false;
  if (f.status === "not-fresh" ? m.status === "fresh" : (f.status && m.status !== f.status)) return false;
  if (f.age) {
    const a = ageDays(m), n = Number(f.age);
    if (a === null) return false;
    if (n < 0 && a > -n) return false;
    if (n > 0 && a < n) return false;
  }
  return true;
}

function fillSelect(id, values) {
  const s = $(id), keep = s.value, first = s.options[0];
  s.replaceChildren(first, ...values.map((v) => el("option", {value: v, text: v})));
  s.value = values.includes(keep) ? keep : "";
}

// -- the map ---------------------------------------------------------------------------------------

function newNode(name, path, file) {
  return {name, path, file, children: new Map(), ids: new Set(), counts: {}};
}

function buildTree() {
  const f = filters();
  const root = newNode("", "", false);
  for (const m of state.memories) {
    if (!passes(m, f)) continue;
    const paths = m.paths.length ? m.paths : [NO_FILE];
    for (const p of paths) {
      let node = root;
      node.ids.add(m.id);
      const parts = p.split("/");
      parts.forEach((part, i) => {
        const path = parts.slice(0, i + 1).join("/");
        if (!node.children.has(part)) node.children.set(part, newNode(part, path, i === parts.length - 1));
        node = node.children.get(part);
        node.ids.add(m.id);
      });
    }
  }
  const count = (node) => {
    for (const id of node.ids) {
      const s = state.byId.get(id).status;
      node.counts[s] = (node.counts[s] || 0) + 1;
    }
    node.children.forEach(count);
  };
  count(root);
  state.tree = root;
}

function worst(node) {
  return ORDER.find((s) => node.counts[s]) || "fresh";
}

function findNode(path) {
  if (!state.tree) return null;
  if (path === "") return state.tree;
  let node = state.tree;
  for (const part of path.split("/")) {
    node = node.children.get(part);
    if (!node) return null;
  }
  return node;
}

function sortedChildren(node) {
  // folders first, then files; each by name
  return [...node.children.values()].sort((a, b) =>
    (a.file === b.file ? a.name.localeCompare(b.name) : a.file ? 1 : -1));
}

function nodeRow(node) {
  const total = node.ids.size;
  const bar = el("span", {class: "bar", title: ORDER.filter((s) => node.counts[s])
    .map((s) => `${node.counts[s]} ${s}`).join(", ")});
  for (const s of ["fresh", "moved", "stale", "deleted", "unchecked"]) {
    if (!node.counts[s]) continue;
    const seg = el("span", {class: `b-${s}`});
    seg.style.width = `${(100 * node.counts[s]) / total}%`;
    bar.append(seg);
  }
  const row = el("div", {
    class: `node ${node.file ? "file" : "dir"} st-${worst(node)}${state.selected === node.path ? " selected" : ""}`,
    role: "treeitem", dataset: {path: node.path, count: String(total), status: worst(node)},
    onclick: (ev) => { ev.stopPropagation(); selectNode(node.path, true); },
  }, el("span", {class: "twist", text: node.file ? "" : (state.expanded.has(node.path) ? "▾" : "▸")}),
  el("span", {class: "name", text: node.path === "" ? "(repository)" : node.name, title: node.path}),
  bar, el("span", {class: "count", text: String(total)}));
  return row;
}

function renderNode(node) {
  const li = el("li", {}, nodeRow(node));
  if (!node.file && state.expanded.has(node.path)) {
    // lazy: the children of a folder are made only when it is open
    li.append(el("ul", {role: "group"}, sortedChildren(node).map(renderNode)));
  }
  return li;
}

function renderTree() {
  const root = state.tree;
  $("tree").replaceChildren(renderNode(root));
  const n = state.memories.length, shown = root.ids.size;
  const notFresh = ["stale", "moved", "deleted"].reduce((a, s) => a + (root.counts[s] || 0), 0);
  $("summary").textContent = `${shown} of ${n} memories · ${notFresh} not fresh` +
    (root.counts.unchecked ? ` · ${root.counts.unchecked} being checked` : "");
}

function selectNode(path, toggle) {
  const node = findNode(path);
  if (!node) return;
  if (!node.file && toggle) {
    if (state.expanded.has(path) && state.selected === path) state.expanded.delete(path);
    else state.expanded.add(path);
  }
  state.selected = path;
  state.search = null;
  renderTree();
  showList(`${path === "" ? "All memories" : path}`, idsByRecency(node.ids));
}

function idsByRecency(ids) {
  return [...ids].map((id) => state.byId.get(id))
    .sort((a, b) => (b.updated || "").localeCompare(a.updated || "") || b.id.localeCompare(a.id));
}

// -- the list --------------------------------------------------------------------------------------

function showList(title, items) {
  state.list = items;
  state.listTitle = title;
  state.shown = 0;
  $("list-title").textContent = `${title} (${items.length})`;
  $("list").replaceChildren();
  renderMore();
}

function renderMore() {
  const next = state.list.slice(state.shown, state.shown + PAGE);
  state.shown += next.length;
  $("list").append(...next.map(listItem));
  $("more").hidden = state.shown >= state.list.length;
  $("more").textContent = `more (${state.list.length - state.shown} left)`;
}

function listItem(m) {
  return el("li", {class: `item${state.current === m.id ? " selected" : ""}`, dataset: {id: m.id, status: m.status},
                   onclick: () => openMemory(m.id)},
    el("div", {class: "t"}, el("span", {class: `badge st-${m.status}`, text: m.status}), m.title),
    el("div", {class: "m", text: `${m.type} · ${m.scope} · ${m.author || "?"} · ${stamp(m.updated)}` +
                                  (m.paths.length ? ` · ${m.paths.join(", ")}` : "")}));
}

// -- one memory ------------------------------------------------------------------------------------

async function openMemory(id) {
  state.current = id;
  document.querySelectorAll(".item").forEach((e) => e.classList.toggle("selected", e.dataset.id === id));
  let m;
  try {
    m = await api(`/api/memory/${encodeURIComponent(id)}`);
  } catch (e) {
    $("memory-pane").replaceChildren(el("p", {class: "hint", text: e.message}));
    return;
  }
  if (state.current !== id) return;
  renderMemory(m);
  loadHistory(id);
}

function anchorBox(a) {
  const box = el("div", {class: `anchor st-${a.status}`, dataset: {anchor: a.anchor, status: a.status}},
    el("div", {class: "anchor-head"}, el("span", {class: `badge st-${a.status}`, text: a.status}), a.anchor,
       a.path_now && a.path_now !== a.anchor.split("::")[0] ? ` → now ${a.path_now}${a.symbol_now ? "::" + a.symbol_now : ""}` : "",
       a.reason ? el("span", {class: "reason", text: a.reason}) : null));
  if (a.changed_by) {
    const c = a.changed_by;
    box.append(el("div", {class: "changed-by"}, "changed by ", el("span", {class: "sha", text: short(c.commit)}),
                  ` ${c.subject} (${c.author}, ${day(c.time)})`));
  }
  if (a.diff_html) {
    const d = el("div", {class: "diff"}, el("div", {class: "label", text: "diff since it was anchored"}));
    const body = el("div");
    body.innerHTML = a.diff_html;  // Pygments' HTML: escaped on the server
    d.append(body);
    box.append(d);
  }
  if (a.code_html) {
    const c = el("div", {class: "code"}, el("div", {class: "label",
      text: `the code now, lines ${a.code_lines[0]}–${a.code_lines[1]}`}));
    const body = el("div");
    body.innerHTML = a.code_html;  // Pygments' HTML: escaped on the server
    c.append(body);
    if (a.more_lines) c.append(el("div", {class: "more-lines", text: `… ${a.more_lines} more lines`}));
    box.append(c);
  }
  return box;
}

function renderMemory(m) {
  const pane = $("memory-pane");
  const retired = m.retired ? ` · retired ${stamp(m.retired)}` : "";
  fill(pane,
    el("h2", {class: "mem-title", text: m.title}),
    el("div", {class: "meta"}, el("span", {class: `badge st-${m.status}`, text: m.status}),
       el("span", {class: "type", text: m.type}),
       ` ${m.scope} · ${m.author || "?"} · created ${stamp(m.created)} · updated ${stamp(m.updated)}${retired} · `,
       el("code", {text: m.id}), ` · ${m.path}`),
    m.body ? el("div", {class: "body", text: m.body}) : null,
    m.facts.length ? el("ul", {class: "facts"}, m.facts.map((f) => el("li", {text: f}))) : null,
    m.tags.length ? el("div", {class: "meta", text: `tags: ${m.tags.join(", ")}`}) : null,
    m.supersedes.length ? el("div", {class: "meta"}, "supersedes ", m.supersedes.map(memLink)) : null,
    m.superseded_by.length ? el("div", {class: "meta"}, "superseded by ", m.superseded_by.map(memLink)) : null,
    actions(m),
    el("div", {id: "form"}),
    el("h3", {text: "anchors"}),
    m.anchors_now.length ? m.anchors_now.map(anchorBox) : el("p", {class: "hint", text: "no anchors"}),
    el("h3", {text: "history (gitmem log)"}),
    el("ul", {class: "history", id: "history"}, el("li", {class: "hint", text: "loading…"})));
}

function memLink(id) {
  return el("a", {class: "mem", text: id + " ", onclick: () => openMemory(id)});
}

async function loadHistory(id) {
  let entries;
  try {
    entries = await api(`/api/memory/${encodeURIComponent(id)}/log`);
  } catch (e) {
    entries = null;
    if (state.current === id && $("history")) $("history").replaceChildren(el("li", {class: "hint", text: e.message}));
  }
  if (!entries || state.current !== id || !$("history")) return;
  $("history").replaceChildren(...(entries.length ? entries.map((e) => el("li", {},
    el("span", {class: "sha", text: short(e.commit)}), ` ${day(e.time)} `,
    el("span", {class: `k-${e.kind}`, text: e.what}), ` — ${e.subject} (${e.author})`))
    : [el("li", {class: "hint", text: "no history yet (the memory file is not committed)"})]));
}

function actions(m) {
  const box = el("div", {class: "actions"});
  if (m.retired) return box;
  const b = (name, label, title, onclick, cls) => el("button", {type: "button", dataset: {action: name}, title,
                                                                  class: cls, onclick, text: label});
  box.append(
    b("keep", "Keep", "still true: re-anchor to the code as it is now (gitmem reanchor)", () => act(m, "keep", {})),
    b("edit", "Edit", "change the text, then re-anchor", () => editForm(m)),
    b("retire", "Retire", "no longer true (gitmem retire)", () => retireForm(m), "danger"),
    b("supersede", "Supersede", "replace with a new memory (gitmem supersede)", () => supersedeForm(m)));
  if (m.scope === "local") box.append(b("share", "Share", "make it a team memory (gitmem share)", () => act(m, "share", {})));
  return box;
}

function showForm(...children) {
  $("form").replaceChildren(el("div", {class: "form"}, ...children,
    el("button", {type: "button", text: "Cancel", onclick: () => $("form").replaceChildren()})));
}

function editForm(m) {
  const title = el("input", {id: "edit-title", value: m.title});
  const text = el("textarea", {id: "edit-text"});
  text.value = m.body;
  showForm(el("label", {text: "title"}), title, el("label", {text: "text"}), text,
    el("button", {type: "button", id: "edit-save", text: "Save and re-anchor",
                  onclick: () => act(m, "edit", {title: title.value, text: text.value})}), " ");
}

function retireForm(m) {
  const reason = el("input", {id: "retire-reason", placeholder: "why it is no longer true (optional; kept as a fact)"});
  showForm(el("label", {text: `retire “${m.title}”`}), reason,
    el("button", {type: "button", id: "retire-confirm", text: "Retire",
                  onclick: () => act(m, "retire", {reason: reason.value})}), " ");
}

function supersedeForm(m) {
  const text = el("textarea", {id: "supersede-text", placeholder: "the replacement (first line = title)"});
  showForm(el("label", {text: "the new memory"}), text,
    el("button", {type: "button", id: "supersede-confirm", text: "Supersede",
                  onclick: () => act(m, "supersede", {text: text.value})}), " ");
}

async function act(m, action, body) {
  let res;
  try {
    res = await api(`/api/memory/${encodeURIComponent(m.id)}/${action}`, body);
  } catch (e) {
    toast(`${action} failed: ${e.message}`, true);
    return;
  }
  const said = {keep: `kept ${m.id}: re-anchored`, edit: `edited ${m.id} and re-anchored it`,
                retire: `retired ${m.id}`, supersede: `${res.id} supersedes ${m.id}`,
                share: `shared ${m.id} → ${res.path}`}[action];
  toast(`${said} (commit .gitmem/ to share the decision)`);
  await reloadMap();
  openMemory(action === "supersede" ? res.id : m.id);
}

// -- search ----------------------------------------------------------------------------------------

async function runSearch(q) {
  if (!q.trim()) {
    state.search = null;
    $("org").hidden = true;
    selectNode(state.selected ?? "", false);
    return;
  }
  const t0 = performance.now();
  let hits;
  try {
    hits = await api(`/api/search?q=${encodeURIComponent(q)}`);
  } catch (e) {
    toast(`search failed: ${e.message}`, true);
    return;
  }
  state.search = {q, hits};
  showSearch();
  state.timings.search = performance.now() - t0;
  performance.mark("gitmem-search-rendered");
  orgSearch(q);
}

// -- the organisation's memories (other repositories, from the org index) ---------------------------

async function orgSearch(q) {
  // the org index's hits for the same query, in their own section: each labelled with its repository and status
  let res;
  try {
    res = await api(`/api/org-search?q=${encodeURIComponent(q)}`);
  } catch (e) {
    if (!state.search || state.search.q !== q) return;
    $("org").hidden = false;
    $("org-title").textContent = "Organisation";
    $("org-list").replaceChildren(el("li", {class: "hint", text: `org search failed: ${e.message}`}));
    return;
  }
  if (!state.search || state.search.q !== q) return;  // a newer search is on the page
  state.org = res;
  $("org").hidden = !res.configured;
  if (!res.configured) return;
  $("org-title").textContent = `Organisation (${res.hits.length})`;
  $("org-list").replaceChildren(...(res.hits.length ? res.hits.map(orgItem)
    : [el("li", {class: "hint", text: "no memories of other repositories match"})]));
  document.body.dataset.org = "1";
}

function orgItem(h) {
  const body = h.body ? el("div", {class: "body", text: h.body, hidden: true}) : null;
  const status = h.status === "unchecked" ? "unchecked" : h.status;
  return el("li", {class: "item org", dataset: {repo: h.repo, id: h.id, status},
                   onclick: () => { if (body) body.hidden = !body.hidden; }},
    el("div", {class: "t"}, el("span", {class: `badge st-${status}`, text: status}),
       el("span", {class: "repo", text: h.repo}), " ", h.title),
    el("div", {class: "m", text: `${h.type} · ${h.trust || "trust unknown"} · ${h.repo} ${short(h.commit)}` +
                                  (h.anchors.length ? ` · ${h.anchors.join(", ")}` : "") +
                                  (h.reason ? ` · ${h.reason}` : "")}),
    body);
}

function showSearch() {
  const f = filters();
  const hits = state.search.hits.filter((h) => passes(h, f));
  showList(`“${state.search.q}”`, hits);
  if (!hits.length) $("list").append(el("li", {class: "hint", text: "no matches"}));
}

// -- loading and live updates ----------------------------------------------------------------------

async function reloadMap() {
  const data = await api("/api/map");
  state.memories = data.memories;
  state.byId = new Map(data.memories.map((m) => [m.id, m]));
  fillSelect("f-type", [...new Set(data.memories.map((m) => m.type))].sort());
  fillSelect("f-author", [...new Set(data.memories.map((m) => m.author).filter(Boolean))].sort());
  if (state.tree === null) {
    buildTree();
    autoExpand();
  }
  refreshView();
  state.version = data.version;
  const unchecked = data.unchecked ? ` · checking ${data.unchecked}` : "";
  $("live").textContent = `live · ${new Date().toLocaleTimeString()}${unchecked}`;
  $("live").className = "on";
}

const AUTO_EXPAND_ROWS = 40;  // on first load, folders open breadth-first while the map shows fewer rows

function autoExpand() {
  let rows = 1, level = [state.tree];
  while (level.length) {
    const next = [];
    for (const node of level) {
      if (node.file) continue;
      if (rows + node.children.size > AUTO_EXPAND_ROWS) return;
      state.expanded.add(node.path);
      rows += node.children.size;
      next.push(...node.children.values());
    }
    level = next;
  }
}

function refreshView() {
  buildTree();
  if (state.selected !== null && !findNode(state.selected)) state.selected = null;
  renderTree();
  if (state.search) showSearch();
  else if (state.selected !== null) showList(state.listTitle, idsByRecency(findNode(state.selected).ids));
  else showList("Recently updated", idsByRecency(state.tree.ids));
}

async function poll() {
  try {
    const v = await api("/api/version");
    if (v.version !== state.version) {
      await reloadMap();
      // the open memory is drawn again, unless the user is filling in one of its forms
      const editing = $("form") && $("form").childElementCount > 0;
      if (state.current && state.view === "map" && !editing) openMemory(state.current);
      if (state.view === "sessions") loadSessions();
    }
  } catch (e) {
    $("live").textContent = `offline: ${e.message}`;
    $("live").className = "";
  }
}

// -- sessions --------------------------------------------------------------------------------------

const EVENT_LABEL = {SessionStart: "session start", Prompt: "prompt", BeforeFile: "before a file",
                     AfterCompact: "compacted: the agent forgot what it was given"};

async function loadSessions() {
  let list;
  try {
    list = await api("/api/sessions");
  } catch (e) {
    toast(e.message, true);
    return;
  }
  state.sessions = list;
  $("sessions").replaceChildren(...(list.length ? list.map((s) => el("li", {
    class: `session${state.session === s.session ? " selected" : ""}`, dataset: {session: s.session},
    onclick: () => showSession(s.session)},
  el("div", {class: "t", text: s.session}),
  el("div", {class: "m", text: `${s.agent || "agent"} · ${stamp(s.last)} · given ${s.given.length} · ` +
                                 `produced ${s.produced.length}`})))
    : [el("li", {class: "hint", text: "no agent session yet (gitmem install)"})]));
  if (state.session) showSession(state.session);
}

function givenList(items, cls) {
  return el("ul", {class: `given ${cls || ""}`}, items.map((g) => el("li", {},
    el("span", {class: `badge st-${g.status || "unchecked"}`, text: g.status || "gone"}),
    g.title ? el("a", {class: "mem", text: g.title, onclick: () => { switchView("map"); openMemory(g.id); }})
      : `${g.id} (no longer a memory)`)));
}

function showSession(key) {
  state.session = key;
  document.querySelectorAll(".session").forEach((e) => e.classList.toggle("selected", e.dataset.session === key));
  const s = (state.sessions || []).find((x) => x.session === key);
  if (!s) return;
  const events = s.events.map((ev) => {
    const what = ev.event === "BeforeFile" ? `before ${ev.kind === "read" ? "reading" : "editing"} ${ev.file}`
      : ev.event === "SessionStart" ? `session start${ev.source ? ` (${ev.source})` : ""}` : EVENT_LABEL[ev.event] || ev.event;
    return el("div", {class: "event", dataset: {event: ev.event}},
      el("div", {class: "when", text: stamp(ev.time)}), el("div", {class: "what", text: what}),
      ev.prompt ? el("div", {class: "prompt", text: ev.prompt}) : null,
      ev.given.length ? givenList(ev.given) : null,
      ev.listed.length ? el("div", {class: "listed"}, "listed by title: ", givenList(ev.listed, "listed")) : null);
  });
  fill($("session-pane"),
    el("h2", {text: `session ${s.session}`}),
    el("div", {class: "meta", text: `${s.agent || "agent"} · last seen ${stamp(s.last)}`}),
    el("h3", {text: "what gitmem gave the agent, and when"}),
    events.length ? events : [el("p", {class: "hint", text: "no event log (a session from before gitmem kept one)"}),
                              givenList(s.given)],
    el("h3", {text: "memories this session produced"}),
    s.produced.length ? givenList(s.produced) : el("p", {class: "hint", text: "none (yet)"}));
}

function switchView(view) {
  state.view = view;
  $("view-map").hidden = view !== "map";
  $("view-sessions").hidden = view !== "sessions";
  $("tab-map").classList.toggle("active", view === "map");
  $("tab-sessions").classList.toggle("active", view === "sessions");
  if (view === "sessions") loadSessions();
}

// -- start -----------------------------------------------------------------------------------------

async function start() {
  $("tab-map").addEventListener("click", () => switchView("map"));
  $("tab-sessions").addEventListener("click", () => switchView("sessions"));
  $("more").addEventListener("click", renderMore);
  let timer;
  $("search").addEventListener("input", (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => runSearch(e.target.value), 350);
  });
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    clearTimeout(timer);
    runSearch($("search").value);
  });
  for (const id of ["f-type", "f-scope", "f-author", "f-age", "f-status"]) $(id).addEventListener("change", refreshView);
  const t0 = performance.now();
  try {
    await reloadMap();
  } catch (e) {
    $("summary").textContent = `cannot load the map: ${e.message}`;
    return;
  }
  state.timings.map = performance.now() - t0;
  performance.mark("gitmem-map-rendered");
  document.body.dataset.ready = "1";
  setInterval(poll, POLL_MS);
}

start();
