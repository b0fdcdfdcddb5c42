// The page: the run list (SSE /api/feed), one run's events (SSE /api/runs/:id/feed, or
// /api/runs/:id/replay stepped with a slider), folded by view.js, drawn by graph.js and here.
// Data reaches the DOM only through textContent and attributes.
import { api, apiEvents } from "./api.js";
import { counters, describeEvent, initialView, reduce, shortJson } from "./view.js";
import { drawGraph, flash, leafBox, setActive, setCounts, setRecent } from "./graph.js";
import { renderHuman } from "./human.js";
import { childrenOf, renderLineage, runLink } from "./lineage.js";
import { el as h } from "./dom.js";

const CACHE_EVERY = 200;
const TEXT_LIMIT = 1200;
/** Below this scale the chart is unreadable: it is drawn larger and scrolls to the active state. */
const MIN_SCALE = 0.7;
const FINAL = new Set(["done", "failed", "cancelled"]);

const $ = (id) => document.getElementById(id);
const q = (sel) => document.querySelector(sel);

/** Long text is cut; the element's title has all of it. */
function setText(node, text, limit = TEXT_LIMIT) {
  node.textContent = text.length > limit ? `${text.slice(0, limit)}…` : text;
  if (text.length > limit) node.title = text;
  else node.removeAttribute("title");
  return node;
}

const state = {
  runs: [],
  selected: null,
  /** The user picked the run (click or URL hash): no auto-follow. */
  explicit: false,
  /** none | waiting | live | loading | replay | error */
  mode: "none",
  view: initialView(),
  layout: null,
  graph: null,
  feed: null,
  lastId: -Infinity,
  retry: undefined,
  /** { events, pos, cache: Map<index, view> } */
  replay: null,
  notice: "",
  noticeError: false,
  flashKeys: new Set(),
  zoom: { mode: "auto", scale: 1 },
  userScrolledAt: 0,
};

/** What the timeline shows, to update it incrementally. */
const shown = { entries: [], nodes: [], stream: null, snapshot: undefined };

// ---------------------------------------------------------------- run list

function connectRuns() {
  const conn = q("[data-testid=conn]");
  const set = (s, label) => {
    conn.dataset.state = s;
    conn.querySelector(".conn-text").textContent = label;
  };
  const es = apiEvents("/api/feed");
  set("connecting", "connecting…");
  es.addEventListener("open", () => set("open", "connected"));
  es.addEventListener("error", () => {
    if (es.readyState !== EventSource.CLOSED) return set("connecting", "reconnecting…");
    set("closed", "disconnected");
    // EventSource gives up after an HTTP error: try again later.
    setTimeout(connectRuns, 3000);
  });
  es.addEventListener("queues", (m) => {
    try {
      renderQueues(JSON.parse(m.data));
    } catch {
      // a malformed frame: keep the last counts
    }
  });
  es.addEventListener("runs", (m) => {
    let runs;
    try {
      runs = JSON.parse(m.data);
    } catch {
      return;
    }
    if (Array.isArray(runs)) onRuns(runs);
  });
}

/** Job queues' counts (`forge-ts visualize --redis`): one row per queue, the Redis error if any. */
function renderQueues(body) {
  const box = q("[data-testid=queues]");
  const queues = Array.isArray(body?.queues) ? body.queues : [];
  box.hidden = queues.length === 0 && !body?.error;
  const cell = (name, value) => {
    const td = document.createElement("td");
    td.dataset.count = name;
    td.textContent = String(value);
    return td;
  };
  box.querySelector("tbody").replaceChildren(
    ...queues.map((c) => {
      const tr = document.createElement("tr");
      tr.dataset.queue = c.queue;
      const name = document.createElement("td");
      name.textContent = String(c.queue).replace(/^forge-/, "");
      name.title = c.queue;
      tr.append(name, cell("waiting", (c.waiting ?? 0) + (c.delayed ?? 0)), cell("active", c.active ?? 0), cell("completed", c.completed ?? 0), cell("failed", c.failed ?? 0));
      return [tr, ...(Array.isArray(c.running) ? c.running : []).map(runningRow)];
    }).flat(),
  );
  box.querySelector(".queues-error").textContent = body?.error ? `Redis: ${body.error}` : "";
}

/** A running job under its queue: its id and the progress its worker published (state, iteration). */
function runningRow(job) {
  const tr = document.createElement("tr");
  tr.className = "running";
  tr.dataset.job = String(job?.id ?? "");
  const td = document.createElement("td");
  td.colSpan = 5;
  const p = job?.progress;
  const where = p && typeof p === "object" && typeof p.state === "string" ? ` · ${p.state} · iteration ${Number(p.iteration) || 0}` : "";
  td.textContent = `↳ ${job?.id ?? "?"}${where}`;
  tr.append(td);
  return tr;
}

function onRuns(runs) {
  state.runs = runs.filter((r) => r && typeof r.runId === "string");
  renderRuns();
  if (!state.explicit) autoFollow();
  else if (state.mode === "waiting" && runById(state.selected)) startSelected();
  refreshReplay();
  schedule();
}

/**
 * A stored run shown at the end of its replay that moved on in the store (a waiting run was
 * continued elsewhere) is loaded again; a replay stepped back is left alone. A decision alone
 * does not move a waiting run on: its requests panel shows it.
 */
function refreshReplay() {
  const r = state.replay;
  const run = runById(state.selected);
  if (state.mode !== "replay" || !r || !run || run.live || r.pos !== r.events.length) return;
  if (replayKey(run) !== r.key) startReplay(run.runId);
}

const replayKey = (run) =>
  run?.status === "waiting" ? `waiting:${(run.requests ?? []).map((q) => q.callId).join(",")}` : `${run?.status}:${run?.updatedAt}`;

const runById = (id) => state.runs.find((r) => r.runId === id);
const newestFirst = (runs) => [...runs].sort((a, b) => (Number(b.startedAt) || 0) - (Number(a.startedAt) || 0) || String(b.runId).localeCompare(String(a.runId)));

/**
 * Follow the newest live run: a newer one than the run shown (never back to an older one when
 * the run shown finishes); the run shown followed live if it turned live while replayed.
 */
function autoFollow() {
  // Top-level runs only: a child run is followed from its parent's page (it would take the
  // view away from a parent that goes on after it).
  const live = newestFirst(state.runs.filter((r) => r.live && !r.depth))[0];
  if (!live) return;
  const shownRun = runById(state.selected);
  if (live.runId !== state.selected) {
    if (!shownRun || (Number(live.startedAt) || 0) >= (Number(shownRun.startedAt) || 0)) select(live.runId, false);
  } else if (state.mode !== "live") {
    resetView();
    startLive(live.runId);
  }
}

const runItems = new Map();

/** The selected run's line as its live feed has it (the list is debounced). */
function withLiveView(r) {
  const snap = state.view.snapshot;
  if (r.runId !== state.selected || state.mode !== "live" || !snap) return r;
  const it = snap.context?.iteration;
  return { ...r, status: snap.status, state: state.view.leaves.join(", ") || r.state, iteration: typeof it === "number" ? it : r.iteration };
}

function fillRunLine(item, r) {
  const status = String(r.status ?? "");
  if (item.li.getAttribute("data-status") !== status) item.li.setAttribute("data-status", status);
  item.st.className = `st ${stateClass(String(r.state ?? ""), status)}`;
  setText(item.st, String(r.state || r.status || "?"), 28);
  // null: the stored checkpoint could not be read (the server says why).
  item.it.textContent = r.iteration === null ? "it ?" : `it ${Number(r.iteration) || 0}`;
  if (r.unreadable) item.it.title = String(r.unreadable);
}

function patchSelectedRun() {
  const item = runItems.get(state.selected);
  const r = runById(state.selected);
  if (item && r) fillRunLine(item, withLiveView(r));
}

function renderRuns() {
  runItems.clear();
  // In the server's order: top-level runs newest first, child runs under their parents.
  const items = state.runs.map((run) => {
    const r = withLiveView(run);
    const depth = Math.max(0, Math.min(6, Number(r.depth) || 0));
    const li = h("li", `run-item${r.runId === state.selected ? " selected" : ""}`, undefined, {
      "data-testid": "run-item",
      "data-run-id": r.runId,
      "data-live": String(!!r.live),
      "data-stored": String(!!r.stored),
      tabindex: "0",
      role: "button",
      title: r.runId,
      "data-depth": String(depth),
      ...(r.parent ? { "data-parent-run-id": String(r.parent.runId), style: `--depth: ${depth}` } : {}),
    });
    const top = h("div", "row");
    // A child's id is its parent's plus ".<iteration>-<index>": under its parent, the rest is what tells it apart.
    const under = depth > 0 && r.runId.startsWith(`${r.parent.runId}.`);
    top.append(h("code", "rid", under ? `…${r.runId.slice(r.parent.runId.length)}` : r.runId.slice(0, 8)));
    if (r.live) top.append(h("span", "badge live", "live"));
    if (r.stored) top.append(h("span", "badge stored", "stored"));
    if (r.status === "waiting") top.append(h("span", "badge needs-person", "waiting", { title: "waiting for a person to decide", "data-testid": "waiting-badge" }));
    const item = { li, st: h("span"), it: h("span", "it") };
    const mid = h("div", "row wf");
    mid.append(h("span", "wf-name", String(r.workflow ?? "")), item.it);
    const bottom = h("div", "row");
    bottom.append(item.st, h("span", "when", r.startedAt ? new Date(r.startedAt).toLocaleTimeString() : ""));
    if (r.parent) {
      const call = h("div", "row pcall", `↳ ${depth ? "" : `${String(r.parent.runId).slice(0, 8)} `}call ${r.parent.callId}`, { "data-testid": "run-call" });
      li.append(call);
    }
    li.append(top, mid, bottom);
    fillRunLine(item, r);
    runItems.set(r.runId, item);
    const pick = () => select(r.runId, true);
    li.addEventListener("click", pick);
    li.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        pick();
      }
    });
    return li;
  });
  q("[data-testid=run-list]").replaceChildren(...items);
  $("runs-empty").hidden = items.length > 0;
}

/** Final states are tinted. */
function stateClass(name, status) {
  const top = name.split(".")[0];
  if (FINAL.has(top)) return `s-${top}`;
  if (status === "waiting") return "s-waiting";
  return status === "error" || status === "stopped" ? "s-failed" : "s-active";
}

// ---------------------------------------------------------------- selection and feeds

function select(runId, explicit) {
  if (explicit) {
    state.explicit = true;
    const hash = `#run=${encodeURIComponent(runId)}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }
  if (runId !== state.selected || state.mode === "error") {
    stopFeed();
    state.selected = runId;
    resetView();
    startSelected();
  }
  renderRuns();
}

function resetView() {
  state.view = initialView();
  state.lastId = -Infinity;
  state.replay = null;
  state.notice = "";
  state.flashKeys.clear();
  Object.assign(shown, { entries: [], nodes: [], stream: null, snapshot: undefined });
  $("timeline").replaceChildren();
  renderNow();
  schedule();
}

function startSelected() {
  const run = runById(state.selected);
  if (!run) {
    state.mode = "waiting";
    return schedule();
  }
  if (!run.live && run.stored && run.replayable) return startReplay(run.runId);
  startLive(run.runId);
  if (!run.live && run.stored) setNotice(`This run cannot be replayed: ${run.why ?? "unknown workflow"}`, false);
}

function stopFeed() {
  clearTimeout(state.retry);
  state.feed?.close();
  state.feed = null;
}

function startLive(runId) {
  stopFeed();
  state.mode = "live";
  // Opened again after an HTTP error: from the last event applied (EventSource's own
  // reconnections send Last-Event-ID).
  const after = state.lastId > 0 ? `?after=${state.lastId}` : "";
  const es = apiEvents(`/api/runs/${encodeURIComponent(runId)}/feed${after}`);
  state.feed = es;
  const parse = (m) => {
    try {
      return JSON.parse(m.data);
    } catch {
      return undefined;
    }
  };
  es.addEventListener("inspect", (m) => {
    const ev = parse(m);
    if (state.feed !== es || !ev) return;
    const id = typeof ev.id === "number" ? ev.id : Number(m.lastEventId);
    if (Number.isFinite(id)) {
      // Sent again after a reconnection: applied already.
      if (id <= state.lastId) return;
      state.lastId = id;
    }
    if (ev.runId === undefined || ev.runId === runId) apply(ev);
  });
  es.addEventListener("gap", (m) => {
    if (state.feed === es) apply({ type: "gap", lost: Number(parse(m)?.lost) || 0 });
  });
  es.addEventListener("error", () => {
    if (state.feed !== es || es.readyState !== EventSource.CLOSED) return;
    // Closed for good (an HTTP error): open it again later; events already applied are skipped.
    state.retry = setTimeout(() => state.feed === es && startLive(runId), 3000);
  });
  schedule();
}

function apply(ev) {
  const prev = state.view;
  state.view = reduce(prev, ev);
  if (state.view.microsteps !== prev.microsteps) for (const k of state.view.taken) state.flashKeys.add(k);
  // A new snapshot redraws everything at once, so no panel is ever a macrostep behind the state.
  if (state.view.snapshot !== prev.snapshot) render();
  else if (state.view.leaves !== prev.leaves) renderNow();
  schedule();
}

async function startReplay(runId) {
  stopFeed();
  state.mode = "loading";
  resetView();
  setNotice("loading the replay…", false);
  // The run as listed when the replay was asked for: a later change loads it again.
  const asked = runById(runId);
  let res, body;
  try {
    res = await api(`/api/runs/${encodeURIComponent(runId)}/replay`);
    body = await res.json().catch(() => null);
  } catch (err) {
    body = { error: { message: err?.message ?? String(err) } };
  }
  if (state.selected !== runId || state.mode !== "loading") return;
  if (!res?.ok || !Array.isArray(body?.events)) {
    state.mode = "error";
    const e = body?.error;
    return setNotice(`replay failed: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? `HTTP ${res?.status}`}`, true);
  }
  state.mode = "replay";
  setNotice("", false);
  const n = body.events.length;
  state.replay = { events: body.events, pos: n, cache: new Map([[0, initialView()]]), key: replayKey(asked) };
  const slider = q("[data-testid=replay-slider]");
  slider.max = String(n);
  slider.value = String(n);
  setPos(n);
  refreshReplay();
}

/** The fold of the replay's events[0..i), from the nearest cached view. */
function viewAt(i) {
  const r = state.replay;
  let base = Math.floor(i / CACHE_EVERY) * CACHE_EVERY;
  while (!r.cache.has(base)) base -= CACHE_EVERY;
  let v = r.cache.get(base);
  for (let j = base; j < i; j++) {
    v = reduce(v, r.events[j]);
    if ((j + 1) % CACHE_EVERY === 0) r.cache.set(j + 1, v);
  }
  return v;
}

function setPos(i) {
  const r = state.replay;
  if (!r) return;
  r.pos = Math.max(0, Math.min(r.events.length, i));
  const prev = state.view;
  state.view = viewAt(r.pos);
  if (state.view.microsteps !== prev.microsteps) for (const k of state.view.taken) state.flashKeys.add(k);
  render();
}

function setNotice(text, isError) {
  state.notice = text;
  state.noticeError = isError;
  schedule();
}

// ---------------------------------------------------------------- rendering

let pending = false;
function schedule() {
  if (pending) return;
  pending = true;
  const run = () => pending && render();
  requestAnimationFrame(run);
  // Hidden tabs get no animation frames.
  setTimeout(run, 100);
}

/**
 * Active states, current state and budget counters follow every event at once (the rest once
 * per frame), so each state a run passes through is highlighted however fast it goes.
 */
function renderNow() {
  const v = state.view;
  if (state.graph) setActive(state.graph, v.leaves);
  const cur = $("current-state");
  const text = v.leaves.join(", ") || "—";
  if (cur.textContent !== text) cur.textContent = text;
  cur.className = v.leaves.length === 1 && FINAL.has(v.leaves[0]) ? `s-${v.leaves[0]}` : "s-active";
  updateCounters(v.snapshot?.context);
  patchSelectedRun();
}

function render() {
  pending = false;
  const v = state.view;
  renderBar(runById(state.selected));
  renderNow();
  if (state.graph) {
    setCounts(state.graph, v.edgeCounts);
    setRecent(state.graph, v.taken);
    if (state.flashKeys.size) flash(state.graph, state.flashKeys);
    followActive();
  }
  state.flashKeys.clear();
  const waiting = $("waiting");
  waiting.hidden = !!state.selected && !(v.events === 0 && (state.mode === "waiting" || state.mode === "live"));
  waiting.textContent = state.selected ? "waiting for events" : "no run selected: pick one, or start one (npm start -- --visualize)";
  renderHuman(q("[data-testid=human]"), runById(state.selected));
  renderLineage($("lineage"), state.selected, runById(state.selected), state.runs);
  renderPanels(v);
  renderTimeline(v);
  renderSnapshot(v);
  const lost = $("lost");
  lost.hidden = !v.lost;
  lost.textContent = `${v.lost} events were lost; the history was rebuilt from a snapshot`;
}

function renderBar(run) {
  const id = state.selected;
  $("run-title").textContent = id ? `run ${id.slice(0, 8)}${run?.workflow ? ` · ${run.workflow}` : ""}` : "";
  $("run-title").title = id ?? "";
  const live = state.mode === "live";
  const mode = $("mode");
  mode.textContent = { none: "no run selected", waiting: "waiting for the run…", live: run?.live ? "live" : "finished (live feed)", loading: "loading replay…" }[state.mode] ?? state.mode;
  mode.className = `mode m-${state.mode}${live && run?.live ? " on" : ""}`;
  const finished = !run?.live || run.status !== "active" || (state.view.snapshot && state.view.snapshot.status !== "active");
  $("mode-replay").hidden = !(live && run?.stored && run.replayable && finished);
  // A finished run still in the server's buffer can be shown as it streamed (chunks included).
  $("mode-live").hidden = !(state.mode === "replay" && (run?.live || Number(run?.events) > 0));
  const notice = $("notice");
  notice.hidden = !state.notice;
  notice.textContent = state.notice;
  notice.classList.toggle("err", state.noticeError);
  const r = state.replay;
  q("[data-testid=replay]").hidden = !(r && state.mode === "replay");
  if (r) {
    const slider = q("[data-testid=replay-slider]");
    if (slider.value !== String(r.pos)) slider.value = String(r.pos);
    q("[data-testid=replay-position]").textContent = `${r.pos} / ${r.events.length}`;
    $("replay-event").textContent = r.pos > 0 ? describeEvent(r.events[r.pos - 1]) : "start";
  }
}

const counterRows = new Map();

/** Budget bars: built once; then only their attributes and text change. */
function updateCounters(ctx) {
  for (const c of counters(ctx)) {
    let r = counterRows.get(c.id);
    if (!r) {
      r = { row: h("div", "counter", undefined, { "data-testid": `counter-${c.id}` }), bar: h("div"), fill: h("div", "fill"), num: h("span", "num") };
      r.bar.append(r.fill);
      r.row.append(h("span", "name", c.label), r.bar, r.num);
      $("counters").append(r.row);
      counterRows.set(c.id, r);
    }
    const value = String(c.value);
    const max = c.max === undefined ? "" : String(c.max);
    if (r.row.getAttribute("data-value") !== value) r.row.setAttribute("data-value", value);
    if (r.row.getAttribute("data-max") !== max) r.row.setAttribute("data-max", max);
    const ratio = c.max === undefined ? 0 : c.max > 0 ? Math.min(1, c.value / c.max) : c.value > 0 ? 1 : 0;
    const fmt = (n) => (c.ms ? `${(n / 1000).toFixed(1)} s` : n.toLocaleString("en-US"));
    r.bar.className = `bar${ratio >= 1 ? " full" : ratio >= 0.8 ? " high" : ""}${max ? "" : " nolimit"}`;
    r.fill.style.width = `${(ratio * 100).toFixed(1)}%`;
    r.num.textContent = !ctx ? "—" : max ? `${fmt(c.value)} / ${fmt(c.max)}` : `${fmt(c.value)} · no limit`;
  }
}

const num = (x) => Number(x) || 0;

function renderPanels(v) {
  const snap = v.snapshot;
  const ctx = snap?.context ?? {};
  $("status-line").textContent = snap ? [`status ${snap.status}`, `iteration ${num(ctx.iteration)}`, ctx.run?.workflow].filter(Boolean).join(" · ") : v.events ? "no snapshot yet" : "";

  const error = $("error");
  const err = ctx.error;
  error.hidden = !err && !snap?.error;
  if (!error.hidden) setText(error, err ? `${err.code ?? err.name ?? "error"}${err.origin ? ` (${err.origin})` : ""}: ${err.message ?? shortJson(err)}` : String(snap.error), 400);

  // Required steps, then other tools that completed (not required, not terminal), then the terminal.
  const required = Array.isArray(ctx.steps?.required) ? ctx.steps.required : [];
  const completed = Array.isArray(ctx.steps?.completed) ? ctx.steps.completed : [];
  const doneTools = new Set(completed.map((s) => s?.tool));
  const terminals = Array.isArray(ctx.run?.terminalTools) ? ctx.run.terminalTools : [];
  const extra = [...doneTools].filter((t) => typeof t === "string" && !required.includes(t) && !terminals.includes(t));
  const steps = [...required, ...extra].map((tool, i) => {
    const done = doneTools.has(tool);
    const li = h("li", done ? "done" : "", undefined, { "data-step": String(tool), "data-done": String(done) });
    li.append(h("span", "mark", done ? "✓" : "○"), h("code", "", String(tool)));
    if (i >= required.length) li.append(h("span", "note", "not required"));
    return li;
  });
  if (terminals.length) {
    const li = h("li", `terminal${ctx.terminal ? " done" : ""}`);
    li.append(h("span", "mark", ctx.terminal ? "✓" : "→"), h("code", "", terminals.join(" | ")), h("span", "note", "terminal"));
    steps.push(li);
  }
  $("steps").replaceChildren(...(steps.length ? steps : [h("li", "muted", snap ? "no required steps" : "—")]));

  const calls = Array.isArray(ctx.batch?.calls) ? ctx.batch.calls : [];
  const results = Array.isArray(ctx.batch?.done) ? ctx.batch.done : [];
  const batch = calls.map((call, i) => {
    const rec = results.find((d) => d?.index === i);
    const running = !rec && v.running?.index === i;
    const st = rec ? String(rec.status) : "pending";
    const row = h("div", `call st-${st}${running ? " running" : ""}`, undefined, { "data-status": st, "data-tool": String(call?.tool) });
    const head = h("div", "call-head");
    head.append(h("span", "idx", `#${i}`), h("code", "tool", String(call?.tool)), h("span", "cstatus", running ? "running…" : st));
    row.append(head, setText(h("code", "args"), shortJson(call?.args ?? {}), 120));
    // The child run this call started (workflowTool), once the run list has it.
    const child = childrenOf(state.runs, state.selected).find((c) => c.parent.callId === call?.callId);
    if (child) row.append(runLink(child.runId, `child run ${child.runId} →`, { "data-testid": "batch-child" }));
    if (typeof rec?.content === "string" && rec.content) row.append(setText(h("div", "result"), rec.content, 160));
    return row;
  });
  $("batch").replaceChildren(...(batch.length ? batch : [h("div", "muted", snap ? "no batch in progress" : "—")]));

  const s = ctx.stats ?? {};
  const stats = [
    ["tool calls", num(s.toolCalls)],
    ["rescues", num(s.rescues)],
    ["nudges", num(s.retryNudges) + num(s.stepNudges) + num(s.prereqNudges), `retry ${num(s.retryNudges)} · step ${num(s.stepNudges)} · prereq ${num(s.prereqNudges)}`],
    ["compactions", Array.isArray(s.compactions) ? s.compactions.length : 0],
    ["tool errors", num(s.toolErrors)],
    ["loop breaks", num(s.loopBreaks)],
  ].flatMap(([k, val, detail]) => {
    const dd = h("dd", "", String(val));
    if (detail) dd.append(h("span", "detail", detail));
    return [h("dt", "", k), dd];
  });
  $("stats").replaceChildren(...stats);
}

function entryNode(e) {
  const node = h("div", `entry k-${e.kind}`, undefined, { "data-kind": e.kind, "data-iteration": String(e.iteration) });
  const head = h("div", "head");
  head.append(h("span", "it", `#${e.iteration}`), h("span", "kind", e.label));
  if (e.who) head.append(h("code", "who", e.who));
  if (e.kind !== "system") {
    node.append(head, setText(h("div", "text"), e.text, e.kind === "rescue" ? 4000 : TEXT_LIMIT));
    return node;
  }
  // The system prompt is long: collapsed.
  const details = h("details");
  const summary = h("summary");
  summary.append(head, h("span", "len", `${e.text.length} chars`));
  details.append(summary, h("div", "text", e.text));
  node.append(details);
  return node;
}

function renderTimeline(v) {
  const box = $("timeline");
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 60;
  const list = v.timeline;
  // Entries are immutable: what is still the same object is still on screen.
  let same = 0;
  while (same < list.length && list[same] === shown.entries[same]) same++;
  for (const n of shown.nodes.splice(same)) n.remove();
  shown.stream?.remove();
  shown.stream = null;
  const fresh = list.slice(same).map(entryNode);
  box.append(...fresh);
  shown.nodes.push(...fresh);
  shown.entries = list;
  if (v.stream) {
    const s = (shown.stream = h("div", "entry k-stream", undefined, { "data-kind": "stream", "data-iteration": String(v.stream.iteration) }));
    const head = h("div", "head");
    head.append(h("span", "it", `#${v.stream.iteration}`), h("span", "kind", "streaming…"));
    const t = v.stream.text;
    s.append(head, h("div", "text", t.length > TEXT_LIMIT ? `…${t.slice(-TEXT_LIMIT)}` : t));
    box.append(s);
  }
  const empty = box.querySelector(".empty");
  if (list.length || v.stream) empty?.remove();
  else if (!empty) box.append(h("p", "empty", "no messages yet"));
  if (atBottom || fresh.length === list.length) box.scrollTop = box.scrollHeight;
}

function snapshotJson() {
  const s = state.view.snapshot;
  return s ? JSON.stringify({ value: s.value, status: s.status, context: s.context }, null, 2) : "";
}

/** The JSON is built only while it is shown (a context can be large). */
function renderSnapshot(v) {
  if (shown.snapshot === v.snapshot || !$("snapshot-details").open) return;
  shown.snapshot = v.snapshot;
  $("snapshot-json").textContent = snapshotJson() || "no snapshot yet";
}

// ---------------------------------------------------------------- chart and zoom

async function loadGraph() {
  try {
    const res = await api("/api/graph");
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    state.layout = await res.json();
    state.graph = drawGraph($("graph"), state.layout);
    applyZoom();
    renderNow();
    schedule();
  } catch (err) {
    $("graph-box").append(h("p", "notice err", `the statechart could not be loaded: ${err?.message ?? err}`));
  }
}

function applyZoom() {
  const L = state.layout;
  if (!L) return;
  const box = $("graph-box");
  const W = Math.max(1, L.width);
  const H = Math.max(1, L.height);
  const cw = box.clientWidth - 4;
  const ch = box.clientHeight - 4;
  const fit = Math.min(cw / W, ch / H);
  // auto: the whole chart when that is readable, else its height fitted (at least MIN_SCALE).
  if (state.zoom.mode === "auto") state.zoom.scale = fit >= MIN_SCALE ? fit : Math.max(MIN_SCALE, Math.min(1, ch / H));
  if (state.zoom.mode === "fit") state.zoom.scale = fit;
  const s = state.zoom.scale;
  const svg = $("graph");
  svg.style.width = `${Math.floor(W * s)}px`;
  svg.style.height = `${Math.floor(H * s)}px`;
  box.classList.toggle("overflow", W * s > cw + 1 || H * s > ch + 1);
  followActive(true);
}

/** Scrolls the active state into view when the chart is larger than its box. */
function followActive(force = false) {
  const box = $("graph-box");
  if (!state.graph || !box.classList.contains("overflow")) return;
  if (!force && Date.now() - state.userScrolledAt < 5000) return;
  const b = leafBox(state.graph, state.view.leaves);
  if (!b) return;
  const s = state.zoom.scale;
  const [x0, x1, y0, y1] = [b.x * s, (b.x + b.width) * s, b.y * s, (b.y + b.height) * s];
  const m = 50;
  if (x0 >= box.scrollLeft + m && x1 <= box.scrollLeft + box.clientWidth - m && y0 >= box.scrollTop + m && y1 <= box.scrollTop + box.clientHeight - m) return;
  box.scrollTo({ left: (x0 + x1 - box.clientWidth) / 2, top: (y0 + y1 - box.clientHeight) / 2, behavior: force ? "auto" : "smooth" });
}

function wireZoomAndPan() {
  const box = $("graph-box");
  const zoomBy = (f) => {
    state.zoom.mode = "manual";
    state.zoom.scale = Math.max(0.05, Math.min(3, state.zoom.scale * f));
    $("zoom-fit").classList.remove("on");
    applyZoom();
  };
  $("zoom-in").addEventListener("click", () => zoomBy(1.25));
  $("zoom-out").addEventListener("click", () => zoomBy(0.8));
  $("zoom-fit").addEventListener("click", () => {
    state.zoom.mode = state.zoom.mode === "fit" ? "auto" : "fit";
    $("zoom-fit").classList.toggle("on", state.zoom.mode === "fit");
    applyZoom();
  });
  addEventListener("resize", applyZoom);
  box.addEventListener("wheel", () => (state.userScrolledAt = Date.now()), { passive: true });
  // Drag to pan.
  let drag = null;
  box.addEventListener("pointerdown", (e) => {
    if (e.button === 0) drag = { x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop };
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag || !(e.buttons & 1)) return;
    state.userScrolledAt = Date.now();
    box.scrollLeft = drag.left - (e.clientX - drag.x);
    box.scrollTop = drag.top - (e.clientY - drag.y);
  });
  addEventListener("pointerup", () => (drag = null));
}

// ---------------------------------------------------------------- controls

function wireControls() {
  const slider = q("[data-testid=replay-slider]");
  slider.addEventListener("input", () => setPos(Number(slider.value)));
  $("mode-replay").addEventListener("click", () => state.selected && startReplay(state.selected));
  $("mode-live").addEventListener("click", () => {
    if (!state.selected) return;
    resetView();
    startLive(state.selected);
  });
  $("copy-snapshot").addEventListener("click", async () => {
    const text = snapshotJson();
    $("snapshot-details").open = true;
    $("snapshot-json").textContent = text || "no snapshot yet";
    const copied = $("copied");
    if (!text) return (copied.textContent = "nothing to copy yet");
    try {
      await navigator.clipboard.writeText(text);
      copied.textContent = "copied";
    } catch {
      copied.textContent = "no clipboard here: the JSON is below";
    }
  });
  $("snapshot-details").addEventListener("toggle", () => renderSnapshot(state.view));
  addEventListener("hashchange", () => {
    const id = hashRun();
    if (id) select(id, true);
  });
}

function hashRun() {
  const m = /^#run=(.+)$/.exec(location.hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

async function loadInfo() {
  try {
    const res = await api("/api/info");
    const info = await res.json();
    if (res.status === 401 || res.status === 403) return setNotice(`${info?.error?.message ?? `HTTP ${res.status}`}`, true);
    if (typeof info.pageBytes === "number") q("[data-testid=page-weight]").textContent = `page ${Math.round(info.pageBytes / 1024)} KB, no external requests`;
    if (info.version) $("version").textContent = `visualizer ${info.version}`;
    $("store").textContent = info.store ? `store: ${info.store}` : "no run store";
  } catch {
    /* the footer stays as it is */
  }
}

// For debugging and tests only: the current reduced view.
Object.defineProperty(window, "forgeViz", { value: Object.freeze({ get view() { return state.view; } }) });

wireControls();
wireZoomAndPan();
const initial = hashRun();
if (initial) select(initial, true);
loadInfo();
loadGraph();
connectRuns();
schedule();
