// BlipScope web view: sessions, a session's messages (windowed list, filters, live tail), a
// message's detail, a document's timeline, a flow diagram and findings. Plain JavaScript, no
// framework, nothing fetched from elsewhere. Reads the JSON and Server-Sent Events under /api/.
"use strict";

const ROW = 22;                 // px per message row (the list is windowed: only visible rows exist)
const FLOW_DEFAULT = 200;       // arrows drawn by the flow diagram unless a range is given
const token = new URLSearchParams(location.search).get("access_token");

function api(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(token);
}
async function getJSON(path) {
  const response = await fetch(api(path));
  if (!response.ok) throw new Error(path + ": " + response.status);
  return response.json();
}
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
function bytes(n) {
  if (n === null || n === undefined) return "";
  if (n < 1024) return n + " B";
  if (n < 1048576) return (n / 1024).toFixed(1) + " KB";
  return (n / 1048576).toFixed(1) + " MB";
}
function seconds(s) {
  if (s === null || s === undefined) return "";
  if (s < 1) return (s * 1000).toFixed(1) + " ms";
  if (s < 120) return s.toFixed(2) + " s";
  return Math.floor(s / 60) + " min " + Math.round(s % 60) + " s";
}
const arrows = ["C→S", "S→C"];
const docLink = (doc) => el("a", { href: "#/doc/" + encodeURIComponent(doc), class: "doc" }, doc);

// ---------------------------------------------------------------- state

const state = {
  feed: null,              // the open EventSource
  sessions: [],
  session: null,           // the session open in the messages view
  rows: [],                // every row loaded for it
  view: [],                // indices into rows that pass the filter
  bySeq: new Map(),        // seq -> index into rows
  pending: [],             // rows received while paused
  paused: false,
  missed: 0,
  selected: null,
  filter: { profile: "", dir: "", type: "", error: false, doc: "", q: "" },
  docQuery: "",            // the document ID docSeqs answers
  docSeqs: null,           // seqs of every kept message naming it, from the server (rows carry only 8 IDs)
  docTimer: null,
  sgTimer: null,            // refreshes the Sync Gateway tab while it is shown
  lastFilterMs: null,
};
window.blipscope = { state, applyFilter: () => applyFilter() };

function closeFeed() { if (state.feed) { state.feed.close(); state.feed = null; } }

// ---------------------------------------------------------------- routing

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);

function route() {
  clearInterval(state.sgTimer);
  const hash = location.hash.slice(1) || "/";
  const parts = hash.split("/").filter(Boolean).map(decodeURIComponent);
  const main = document.getElementById("main");
  if (parts[0] === "s" && parts[1]) {
    const id = Number(parts[1]);
    const tab = parts[2] || "messages";
    const selected = parts[2] === "m" ? Number(parts[3]) : null;
    showSession(main, id, selected !== null ? "messages" : tab, selected);
  } else if (parts[0] === "doc" && parts[1]) {
    closeFeed(); state.session = null;
    showDocument(main, parts.slice(1).join("/"));
  } else {
    closeFeed(); state.session = null;
    showSessions(main);
  }
}

function nav(active, session) {
  const links = [el("a", { href: "#/", class: active === "sessions" ? "on" : "" }, "Sessions")];
  if (session !== undefined) {
    const tabs = [["messages", "Messages"], ["flow", "Flow"], ["findings", "Findings"]];
    if (state.session && state.session.id === session && state.session.sgLog) tabs.push(["sglog", "Sync Gateway"]);
    for (const [tab, label] of tabs) {
      links.push(el("a", { href: `#/s/${session}/${tab}`, class: active === tab ? "on" : "", id: "tab-" + tab }, label));
    }
  }
  document.getElementById("nav").replaceChildren(...links);
}

// ---------------------------------------------------------------- sessions

function showSessions(main) {
  nav("sessions");
  const table = el("table", { id: "sessions", class: "grid" },
    el("thead", {}, el("tr", {}, ...["#", "client", "user", "database", "sub-protocol", "replication", "state",
      "duration", "messages C→S / S→C", "bytes C→S / S→C", "revisions", "errors", "findings", "capture"]
      .map((h) => el("th", {}, h)))),
    el("tbody"));
  const note = el("p", { class: "note", id: "sessions-note" });
  main.replaceChildren(el("h2", {}, "Sessions"), table, note);
  getJSON("/api/sessions").then(renderSessions).catch((e) => { note.textContent = String(e); });
  closeFeed();
  state.feed = new EventSource(api("/api/events"));
  state.feed.addEventListener("sessions", (event) => renderSessions(JSON.parse(event.data)));
}

function replicationText(session) {
  const r = session.replication;
  if (!r) return "";
  const kind = r.type === "pushAndPull" ? "push+pull" : r.type;
  const mode = r.continuous === undefined ? "" : r.continuous ? ", continuous" : ", one-shot";
  const collections = r.collections && r.collections.length ? ", " + r.collections.join(" ") : "";
  return kind + mode + collections;
}

function renderSessions(list) {
  state.sessions = list.sessions;
  const body = document.querySelector("#sessions tbody");
  if (!body) return;
  body.replaceChildren(...list.sessions.slice().reverse().map((s) => {
    const r = s.replication || {};
    const docs = r.pushed ? (r.pushed.revisionsSent + r.pulled.revisionsSent) : "";
    const offered = r.pushed ? (r.pushed.revisionsOffered + r.pulled.revisionsOffered) : "";
    const attachments = r.pushed ? (r.pushed.attachmentsSent + r.pulled.attachmentsSent) : 0;
    const findings = s.findings ? s.findings.count : 0;
    const badge = findings ? el("span", { class: "badge", title: s.findings.kinds.join(", ") }, findings + " " + s.findings.kinds.join(", ")) : "";
    const capture = !s.capture ? "" : el("span", { class: "capture" },
      el("a", { href: api(`/api/sessions/${s.id}/capture.blipcap`), download: true }, ".blipcap"), " ",
      el("a", { href: api(`/api/sessions/${s.id}/capture.pcap`), download: true }, "pcap"));
    return el("tr", { class: "session " + (s.live ? "live" : "closed"), "data-id": s.id, onclick: () => { location.hash = `#/s/${s.id}/messages`; } },
      el("td", {}, String(s.id)), el("td", {}, s.client), el("td", {}, s.user || "—"), el("td", {}, s.database),
      el("td", {}, s.subprotocol || ""), el("td", {}, replicationText(s)),
      el("td", { class: "state" }, s.live ? "live" : "closed: " + (s.closeReason || "")),
      el("td", {}, seconds(s.duration)), el("td", {}, s.messages.join(" / ")),
      el("td", {}, bytes(s.bytes[0]) + " / " + bytes(s.bytes[1])),
      el("td", {}, offered === "" ? "" : `${offered} offered, ${docs} sent` + (attachments ? `, ${attachments} attachment(s)` : "")), el("td", {}, String(s.errors)),
      el("td", {}, badge), el("td", { onclick: (e) => e.stopPropagation() }, capture));
  }));
  const note = document.getElementById("sessions-note");
  if (note) note.textContent = list.sessions.length ? `${list.sessions.length} session(s); keeps ${list.limits.maxClosedSessions} closed sessions and ${list.limits.maxMessagesPerSession} messages per session`
    + (list.notRecorded ? `; ${list.notRecorded} not recorded (too many live)` : "") : "No session yet: connect a client through the relay.";
}

// ---------------------------------------------------------------- one session

async function showSession(main, id, tab, selected) {
  nav(tab, id);
  if (!state.session || state.session.id !== id) await loadSession(id);
  if (!state.session) { main.replaceChildren(el("p", {}, "No such session (it may have been forgotten).")); return; }
  nav(tab, id);
  if (tab === "messages" && selected !== null && document.getElementById("list") && document.getElementById("detail")) {
    return selectMessage(selected, false);
  }
  if (tab === "flow") return showFlow(main);
  if (tab === "findings") return showFindings(main);
  if (tab === "sglog") return showSyncGatewayLog(main);
  showMessages(main, selected);
}

async function loadSession(id) {
  closeFeed();
  Object.assign(state, { session: null, rows: [], view: [], bySeq: new Map(), pending: [], missed: 0, selected: null, docQuery: "", docSeqs: null });
  let session;
  try { session = await getJSON(`/api/sessions/${id}`); } catch { return; }
  state.session = session;
  let after = -1;
  for (;;) {
    const page = await getJSON(`/api/sessions/${id}/messages?after=${after}`);
    addRows(page.rows);
    if (!page.more || !page.rows.length) break;
    after = page.rows[page.rows.length - 1].i;
  }
  const last = state.rows.length ? state.rows[state.rows.length - 1].i : -1;
  state.feed = new EventSource(api(`/api/sessions/${id}/events?after=${last}`));
  state.feed.addEventListener("messages", (event) => {
    const rows = JSON.parse(event.data).rows;
    if (state.paused) { state.pending.push(...rows); updateCounts(); return; }
    addRows(rows);
    refreshList(true);
  });
  state.feed.addEventListener("missed", (event) => {
    const info = JSON.parse(event.data);
    state.missed += info.missed;
    const banner = document.getElementById("missed");
    if (banner) { banner.hidden = false; banner.textContent = `You missed ${state.missed} message(s) (the page fell behind); reload to see them all.`; }
  });
  state.feed.addEventListener("session", (event) => {
    state.session = JSON.parse(event.data);
    const header = document.getElementById("session-header");
    if (header) header.replaceWith(sessionHeader());
  });
}

function addRows(rows) {
  for (const row of rows) {
    if (state.bySeq.has(row.i)) continue;
    row.lc = ((row.s || "") + " " + (row.p || "") + " " + (row.docs || []).join(" ")).toLowerCase();
    state.bySeq.set(row.i, state.rows.length);
    state.rows.push(row);
    // Link both ways: a reply arriving live points its request at it.
    if (row.l >= 0 && state.bySeq.has(row.l)) state.rows[state.bySeq.get(row.l)].l = row.i;
    if (matches(row)) state.view.push(state.rows.length - 1);
    else if (state.filter.doc && row.dx) queryDoc();
  }
}

function sessionHeader() {
  const s = state.session;
  const findings = s.findings && s.findings.count
    ? el("a", { class: "badge", href: `#/s/${s.id}/findings` }, `${s.findings.count} finding(s): ${s.findings.kinds.join(", ")}`) : "";
  return el("div", { id: "session-header", class: "session-header" },
    el("b", {}, `Session ${s.id}`), ` ${s.user || "anonymous"} @ ${s.database} from ${s.client}${s.node ? ` to node ${s.node}` : ""}, ${s.subprotocol || ""}, ${replicationText(s)}, `,
    el("span", { class: s.live ? "live" : "closed" }, s.live ? "live" : "closed: " + (s.closeReason || "")),
    `, ${s.messages[0] + s.messages[1]} messages`, s.oldest ? ` (first ${s.oldest} no longer kept)` : "", keptText(s), " ", findings);
}

// Messages the history kept without their body preview and properties, or without the analyzer's
// reading, because the session's budget for them was spent.
function keptText(s) {
  const parts = [];
  if (s.previewsNotKept) parts.push(`${s.previewsNotKept} without body preview`);
  if (s.readingsNotKept) parts.push(`${s.readingsNotKept} without the analyzer's reading`);
  return parts.length ? ` (history budget: ${parts.join(", ")})` : "";
}

// ---------------------------------------------------------------- messages view

function showMessages(main, selected) {
  const f = state.filter;
  const profiles = [...new Set(state.rows.map((r) => r.p).filter(Boolean))].sort();
  const select = (id, key, options) => el("select", { id, onchange: (e) => { f[key] = e.target.value; applyFilter(); } },
    ...options.map(([value, label]) => { const o = el("option", { value }, label); if (f[key] === value) o.selected = true; return o; }));
  const filters = el("div", { class: "filters" },
    select("f-profile", "profile", [["", "any profile"], ...profiles.map((p) => [p, p])]),
    select("f-dir", "dir", [["", "both ways"], ["0", "client → server"], ["1", "server → client"]]),
    select("f-type", "type", [["", "any type"], ["MSG", "MSG"], ["RPY", "RPY"], ["ERR", "ERR"]]),
    el("label", {}, el("input", { type: "checkbox", id: "f-error", checked: f.error, onchange: (e) => { f.error = e.target.checked; applyFilter(); } }), " errors & findings"),
    el("input", { id: "f-doc", placeholder: "document ID", value: f.doc, oninput: (e) => { f.doc = e.target.value; applyFilter(); queryDoc(); } }),
    el("input", { id: "f-text", placeholder: "search summaries", value: f.q, oninput: (e) => { f.q = e.target.value; applyFilter(); } }),
    el("button", { id: "pause", onclick: togglePause }, state.paused ? "Resume" : "Pause"),
    el("span", { id: "count" }));
  const list = el("div", { id: "list", onscroll: () => renderWindow() }, el("div", { id: "spacer" }));
  const header = el("div", { class: "row head" }, ...["#", "time", "dir", "type#num", "flags", "profile", "summary", "wire / size", "RTT", "pair"].map((h) => el("span", {}, h)));
  main.replaceChildren(sessionHeader(),
    el("div", { id: "missed", class: "missed", hidden: state.missed === 0 }, `You missed ${state.missed} message(s); reload to see them all.`),
    filters, el("div", { class: "split" }, el("div", { class: "left" }, header, list), el("div", { id: "detail", class: "detail" }, "Select a message.")));
  refreshList(!selected);
  if (f.doc && state.docQuery !== f.doc) queryDoc();
  if (selected !== null && selected !== undefined) selectMessage(selected, true);
}

function matches(row) {
  const f = state.filter;
  if (f.profile && row.p !== f.profile) return false;
  if (f.dir !== "" && String(row.d) !== f.dir) return false;
  if (f.type && row.ty !== f.type) return false;
  if (f.error && !row.e && !row.f) return false;
  if (f.doc && !(row.docs || []).includes(f.doc) && !(state.docQuery === f.doc && state.docSeqs && state.docSeqs.has(row.i))) return false;
  if (f.q && !row.lc.includes(f.q.toLowerCase())) return false;
  return true;
}

// A row carries at most 8 document IDs (`dx` when it names more, as a changes batch does): the
// document filter asks the server, which reads them all, for the seqs of every kept message
// naming the document, and asks again when a live row that may name it arrives.
function queryDoc() {
  clearTimeout(state.docTimer);
  state.docTimer = setTimeout(async () => {
    const doc = state.filter.doc, session = state.session;
    if (!doc || !session) { state.docSeqs = null; state.docQuery = ""; return; }
    const seqs = new Set();
    let after = -1;
    try {
      for (;;) {
        const page = await getJSON(`/api/sessions/${session.id}/messages?doc=${encodeURIComponent(doc)}&after=${after}`);
        for (const row of page.rows) seqs.add(row.i);
        if (!page.more || !page.rows.length) break;
        after = page.rows[page.rows.length - 1].i;
      }
    } catch { return; }
    if (state.filter.doc !== doc || !state.session || state.session.id !== session.id) return;
    state.docSeqs = seqs; state.docQuery = doc;
    applyFilter();
  }, 150);
}

function applyFilter() {
  const start = performance.now();
  const view = [];
  const rows = state.rows;
  for (let i = 0; i < rows.length; i++) if (matches(rows[i])) view.push(i);
  state.view = view;
  refreshList(false);
  state.lastFilterMs = performance.now() - start;
}

function togglePause() {
  state.paused = !state.paused;
  if (!state.paused && state.pending.length) { addRows(state.pending); state.pending = []; refreshList(true); }
  const button = document.getElementById("pause");
  if (button) button.textContent = state.paused ? "Resume" : "Pause";
  updateCounts();
}

function updateCounts() {
  const count = document.getElementById("count");
  if (count) count.textContent = `${state.view.length} of ${state.rows.length} shown` + (state.pending.length ? `, ${state.pending.length} new while paused` : "");
}

function refreshList(follow) {
  const list = document.getElementById("list");
  if (!list) return;
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - ROW * 2;
  document.getElementById("spacer").style.height = state.view.length * ROW + "px";
  if (follow && atBottom && !state.paused) list.scrollTop = list.scrollHeight;
  renderWindow();
  updateCounts();
}

function renderWindow() {
  const list = document.getElementById("list");
  if (!list) return;
  const spacer = document.getElementById("spacer");
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 10);
  const last = Math.min(state.view.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 10);
  const nodes = [];
  for (let v = first; v < last; v++) nodes.push(rowNode(state.rows[state.view[v]], v));
  spacer.replaceChildren(...nodes);
}

function rowNode(row, position) {
  const pair = row.l >= 0 ? el("a", { href: `#/s/${state.session.id}/m/${row.l}`, class: "pair", title: "its " + (row.ty === "MSG" ? "reply" : "request") }, (row.ty === "MSG" ? "→ #" : "← #") + row.l) : "";
  const classes = ["row", "dir" + row.d, row.e ? "error" : "", row.f ? "finding" : "", row.i === state.selected ? "selected" : ""].join(" ");
  return el("div", { class: classes, "data-seq": row.i, style: `top:${position * ROW}px`, onclick: () => { location.hash = `#/s/${state.session.id}/m/${row.i}`; } },
    el("span", {}, String(row.i)), el("span", {}, row.t.toFixed(3)), el("span", { class: "arrow" }, arrows[row.d]),
    el("span", {}, `${row.ty}#${row.n}`), el("span", {}, row.fl), el("span", {}, row.p || ""),
    el("span", { class: "summary", title: row.s }, row.s), el("span", {}, bytes(row.w) + " / " + bytes(row.u)),
    el("span", {}, row.r === null ? "" : seconds(row.r)), el("span", {}, pair));
}

async function selectMessage(seq, scroll) {
  state.selected = seq;
  const position = state.view.indexOf(state.bySeq.get(seq));
  const list = document.getElementById("list");
  if (scroll && list && position >= 0) list.scrollTop = Math.max(0, position * ROW - list.clientHeight / 2);
  renderWindow();
  const detail = document.getElementById("detail");
  let message;
  try { message = await getJSON(`/api/sessions/${state.session.id}/messages/${seq}`); } catch {
    detail.replaceChildren(el("p", {}, `Message #${seq} is no longer kept.`)); return;
  }
  detail.replaceChildren(...messageDetail(message));
}

function messageDetail(m) {
  const r = m.row;
  const out = [el("h3", {}, `${arrows[r.d]} ${r.ty}#${r.n} ${r.p || ""}`), el("p", { class: "summary" }, r.s)];
  const facts = [["seq", r.i], ["time", r.t.toFixed(6) + " s"], ["flags", r.fl || "—"], ["on the wire", bytes(r.w)],
    ["uncompressed", bytes(r.u)], ["body", bytes(m.bodyBytes) + (m.bodyKept < m.bodyBytes ? ` (first ${bytes(m.bodyKept)} kept)` : "")],
    ["frames", m.frames], ["ACKs for it", m.acks], ["round trip", r.r === null ? "—" : seconds(r.r)]];
  out.push(el("table", { class: "facts" }, ...facts.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, String(v))))));
  out.push(carriageView(m));
  if (m.linked) {
    const l = m.linked;
    out.push(el("p", {}, (l.ty === "MSG" ? "Request: " : "Reply: "),
      el("a", { href: `#/s/${m.session}/m/${l.i}`, id: "linked" }, `${arrows[l.d]} ${l.ty}#${l.n} ${l.s}`)));
  }
  if (m.docs.length) out.push(el("p", { class: "docs" }, "Documents: ", ...m.docs.flatMap((d) => [docLink(d), " "])));
  if (m.findings.length) out.push(el("div", { class: "findings" }, ...m.findings.map((f) => el("p", { class: "finding" }, f.summary))));
  if (m.sgLog && m.sgLog.length) {
    out.push(el("h4", {}, "Sync Gateway's log"));
    out.push(sgLines(m.sgLog, "sglog-detail"));
  }
  out.push(el("h4", {}, "Properties"));
  out.push(m.properties === null ? el("p", {}, `${m.propertyCount} properties, too large to keep`)
    : el("table", { class: "props" }, ...m.properties.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))));
  out.push(el("h4", {}, "Body"));
  out.push(bodyView(m.bodyBase64, m.bodyKept < m.bodyBytes));
  return out;
}

// The frames and ACKs that carried the message: frames before the last are kept up to a
// limit (the rest counted), the last frame is made from the message itself.
function carriageView(m) {
  const frameNames = { M: "MoreComing", Z: "Compressed", U: "Urgent", N: "NoReply" };
  const flagText = (fl) => [...fl].map((c) => frameNames[c] || c).join(" ") || "—";
  const rows = [];
  const frames = m.frameList || [];
  frames.forEach((f, index) => {
    if (index === frames.length - 1 && m.framesNotKept) {
      rows.push(el("tr", { class: "more" }, el("td", { colspan: 5 }, `+${m.framesNotKept} more frame(s) not kept`)));
    }
    rows.push(el("tr", { class: "frame" }, el("td", {}, "frame " + (index === frames.length - 1 ? m.frames : index + 1)),
      el("td", {}, arrows[f.d]), el("td", {}, flagText(f.fl)), el("td", {}, bytes(f.w)), el("td", {}, f.t === null ? "" : f.t.toFixed(6) + " s")));
  });
  for (const a of m.ackList || []) {
    rows.push(el("tr", { class: "ack" }, el("td", {}, "ACK"), el("td", {}, arrows[a.from]),
      el("td", {}, `${bytes(a.bytes)} received`), el("td", {}, ""), el("td", {}, a.t === null ? "" : a.t.toFixed(6) + " s")));
  }
  if (m.acksNotKept) rows.push(el("tr", { class: "more" }, el("td", { colspan: 5 }, `+${m.acksNotKept} more ACK(s) not kept`)));
  return el("details", { class: "carriage", id: "carriage", open: frames.length > 1 || (m.ackList || []).length > 0 },
    el("summary", {}, `Frames and ACKs (${m.frames} frame(s), ${m.acks} ACK(s))`),
    el("table", { class: "frames" }, el("tr", {}, ...["", "dir", "flags", "on the wire", "time"].map((h) => el("th", {}, h))), ...rows));
}

function bodyView(base64, truncated) {
  const binary = atob(base64);
  const data = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) data[i] = binary.charCodeAt(i);
  if (!data.length) return el("p", { class: "empty" }, "(empty)");
  let text = null;
  try { text = new TextDecoder("utf-8", { fatal: true }).decode(data); } catch { text = null; }
  if (text !== null && !truncated) {
    try { return el("div", { class: "json", id: "body-json" }, jsonNode(JSON.parse(text), null)); } catch { /* not JSON */ }
  }
  if (text !== null && !/[\x00-\x08\x0e-\x1f]/.test(text)) return el("pre", { class: "text" }, text + (truncated ? "\n…" : ""));
  return el("pre", { class: "hex" }, hexDump(data) + (truncated ? "\n…" : ""));
}

// JSON as nested <details>: every object and array folds.
function jsonNode(value, key) {
  const label = key === null ? "" : JSON.stringify(key) + ": ";
  if (value !== null && typeof value === "object") {
    const isArray = Array.isArray(value);
    const entries = isArray ? value.map((v, i) => [null, v]) : Object.entries(value);
    const open = isArray ? "[" : "{", close = isArray ? "]" : "}";
    const details = el("details", { open: true }, el("summary", {}, label + open + (entries.length ? "" : close),
      entries.length ? el("span", { class: "folded" }, ` ${entries.length} ${isArray ? "items" : "keys"} ${close}`) : ""));
    for (const [k, v] of entries) details.append(jsonNode(v, k));
    if (entries.length) details.append(el("div", { class: "close" }, close));
    return details;
  }
  return el("div", { class: "leaf" }, label, el("span", { class: typeof value }, JSON.stringify(value)));
}

function hexDump(data) {
  const lines = [];
  for (let offset = 0; offset < data.length; offset += 16) {
    const chunk = data.slice(offset, offset + 16);
    const hex = [...chunk].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const text = [...chunk].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(offset.toString(16).padStart(6, "0") + "  " + hex.padEnd(48) + "  " + text);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------- flow diagram

function showFlow(main) {
  const from = el("input", { id: "flow-from", type: "number", value: state.view.length ? state.rows[state.view[0]].i : 0, min: 0 });
  const count = el("input", { id: "flow-count", type: "number", value: FLOW_DEFAULT, min: 1, max: 5000 });
  const holder = el("div", { id: "flow" });
  const draw = () => holder.replaceChildren(flowDiagram(Number(from.value), Number(count.value)));
  main.replaceChildren(sessionHeader(), el("div", { class: "filters" }, "From message #", from, " show ", count,
    " messages (the messages view's filter applies) ", el("button", { onclick: draw }, "Draw")), holder);
  draw();
}

function flowDiagram(fromSeq, count) {
  const NS = "http://www.w3.org/2000/svg";
  const svgEl = (tag, attrs, text) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const rows = state.view.map((i) => state.rows[i]).filter((r) => r.i >= fromSeq).slice(0, count);
  const left = 170, right = 770, step = 26, top = 40;
  const svg = svgEl("svg", { width: 960, height: top + rows.length * step + 20, class: "flow" });
  const defs = svgEl("defs", {});
  const marker = svgEl("marker", { id: "head", markerWidth: 8, markerHeight: 8, refX: 7, refY: 4, orient: "auto" });
  marker.append(svgEl("path", { d: "M0,0 L8,4 L0,8 z", class: "head" }));
  defs.append(marker); svg.append(defs);
  svg.append(svgEl("text", { x: left, y: 20, "text-anchor": "middle", class: "lane" }, "client"));
  svg.append(svgEl("text", { x: right, y: 20, "text-anchor": "middle", class: "lane" }, "server"));
  svg.append(svgEl("line", { x1: left, y1: 28, x2: left, y2: top + rows.length * step, class: "lifeline" }));
  svg.append(svgEl("line", { x1: right, y1: 28, x2: right, y2: top + rows.length * step, class: "lifeline" }));
  rows.forEach((row, index) => {
    const y = top + index * step;
    const [x1, x2] = row.d === 0 ? [left, right] : [right, left];
    const group = svgEl("g", { class: "arrow " + row.ty + (row.e ? " error" : ""), "data-seq": row.i });
    group.append(svgEl("line", { x1, y1: y, x2, y2: y, "marker-end": "url(#head)" }));
    group.append(svgEl("text", { x: (left + right) / 2, y: y - 5, "text-anchor": "middle" }, `${row.ty}#${row.n} ${row.s}`.slice(0, 90)));
    group.append(svgEl("text", { x: 10, y: y + 4, class: "time" }, row.t.toFixed(3)));
    group.addEventListener("click", () => { location.hash = `#/s/${state.session.id}/m/${row.i}`; });
    svg.append(group);
  });
  return svg;
}

// ---------------------------------------------------------------- findings

async function showFindings(main) {
  const list = el("div", { id: "findings" }, "Loading…");
  main.replaceChildren(sessionHeader(), list);
  const json = await getJSON(`/api/sessions/${state.session.id}/findings`);
  if (!json.findings.length) { list.replaceChildren(el("p", {}, "No findings: nothing stuck, no protocol violation.")); return; }
  list.replaceChildren(...json.findings.map(({ finding, t, seq }) => el("div", { class: "finding-card " + finding.kind },
    el("h4", {}, finding.kind + (finding.side ? ` (${finding.side})` : "")),
    el("p", {}, finding.summary),
    el("p", { class: "meta" }, `at ${seconds(t)}`, finding.profile ? `, ${finding.profile}` : "",
      finding.docID ? ", document " : "", finding.docID ? docLink(finding.docID) : "",
      seq !== null && seq !== undefined ? el("span", {}, ", ", el("a", { href: `#/s/${state.session.id}/m/${seq}`, class: "cite" }, `message #${seq}`)) : ""))));
}

// ---------------------------------------------------------------- document timeline

async function showDocument(main, doc) {
  nav("doc");
  const table = el("table", { id: "timeline", class: "grid" },
    el("thead", {}, el("tr", {}, ...["session", "time", "from", "event", "what happened", "message"].map((h) => el("th", {}, h)))), el("tbody"));
  main.replaceChildren(el("h2", {}, "Document ", el("code", {}, doc)), table);
  const json = await getJSON("/api/docs/" + encodeURIComponent(doc));
  const body = table.querySelector("tbody");
  if (!json.events.length) { body.append(el("tr", {}, el("td", { colspan: 6 }, "No event of this document is kept."))); return; }
  body.replaceChildren(...json.events.map(({ session, t, seq, event, sgLog }) => el("tr", { class: "event " + event.event },
    el("td", {}, el("a", { href: `#/s/${session}/messages` }, String(session))), el("td", {}, seconds(t)),
    el("td", {}, event.from), el("td", {}, event.event),
    el("td", {}, event.summary, sgLog && sgLog.length ? sgLines(sgLog, "") : ""),
    el("td", {}, seq === null || seq === undefined ? "" : el("a", { href: `#/s/${session}/m/${seq}` }, `${event.type}#${event.number}`)))));
}

// ---------------------------------------------------------------- Sync Gateway's log

// Sync Gateway's own lines (relay or web --sg-log), each as SG wrote it.
function sgLines(lines, id) {
  return el("pre", { class: "sglog", id: id || undefined }, lines.map((l) => l.line).join("\n"));
}

// Every line SG wrote about the session, in its order, each line about a client request
// linked to that request's message; refreshed while shown (SG writes after the relay forwards).
async function showSyncGatewayLog(main) {
  const table = el("table", { id: "sglog", class: "grid" },
    el("thead", {}, el("tr", {}, ...["SG time", "level", "line", "message"].map((h) => el("th", {}, h)))), el("tbody"));
  const note = el("p", { class: "note", id: "sglog-note" });
  main.replaceChildren(sessionHeader(), note, table);
  const id = state.session.id;
  const render = async () => {
    let json;
    try { json = await getJSON(`/api/sessions/${id}/sglog`); } catch (e) { note.textContent = String(e); return; }
    note.textContent = `${json.lines.length} line(s) of Sync Gateway's log with c:[${json.correlationID}]`
      + (json.dropped ? `; ${json.dropped} more not kept (budget)` : "");
    table.querySelector("tbody").replaceChildren(...json.lines.map((l) => el("tr", { class: "sgline " + l.level },
      el("td", {}, l.time), el("td", {}, l.level), el("td", { class: "line" }, l.line),
      el("td", {}, l.seq === undefined ? (l.request === undefined ? "" : `request #${l.request}`)
        : el("a", { href: `#/s/${id}/m/${l.seq}` }, `MSG#${l.request}`)))));
  };
  await render();
  clearInterval(state.sgTimer);
  state.sgTimer = setInterval(render, 1000);
}
