// Where a run's events come from: the run list (SSE /api/feed), one run's live feed (SSE
// /api/runs/:id/feed, resumed by event id) or its replay (/api/runs/:id/replay, stepped).
import type { FeedEvent, QueuesBody, ReplayBody, RunSummary } from "../../protocol.js";
import { api, apiEvents, type ProblemBody } from "./api.js";
import { one } from "./dom.js";
import { renderQueues } from "./queues.js";
import { hooks, runById, setNotice, state } from "./state.js";
import { stepOf, stepsOf } from "./steps.js";
import type { View, ViewEvent } from "./types.js";
import { initialView, reduce } from "./view.js";

const CACHE_EVERY = 200;

const parse = <T>(m: MessageEvent): T | undefined => {
  try {
    return JSON.parse(m.data as string) as T;
  } catch {
    return undefined;
  }
};

/** The run list and the queue counts, for as long as the page is open. */
export function connectRuns(onRuns: (runs: RunSummary[]) => void): void {
  const conn = one("[data-testid=conn]");
  const set = (s: string, label: string) => {
    conn.dataset.state = s;
    one(".conn-text", conn).textContent = label;
  };
  const es = apiEvents("/api/feed");
  set("connecting", "connecting…");
  es.addEventListener("open", () => set("open", "connected"));
  es.addEventListener("error", () => {
    if (es.readyState !== EventSource.CLOSED) return set("connecting", "reconnecting…");
    set("closed", "disconnected");
    // EventSource gives up after an HTTP error: try again later.
    setTimeout(() => connectRuns(onRuns), 3000);
  });
  // A malformed frame keeps the last counts / list.
  es.addEventListener("queues", (m) => renderQueues(parse<QueuesBody>(m) ?? null));
  es.addEventListener("runs", (m) => {
    const runs = parse<RunSummary[]>(m);
    if (Array.isArray(runs)) onRuns(runs.filter((r) => r && typeof r.runId === "string"));
  });
}

export const replayKey = (run: RunSummary | undefined): string =>
  run?.status === "waiting" ? `waiting:${(run.requests ?? []).map((q) => q.callId).join(",")}` : `${run?.status}:${run?.updatedAt}`;

export function stopFeed(): void {
  clearTimeout(state.retry);
  state.feed?.close();
  state.feed = null;
}

/** Applies one event of the live feed: the view, the steps, and a redraw (at once for a new snapshot). */
function apply(ev: ViewEvent): void {
  const prev = state.view;
  state.view = reduce(prev, ev);
  if (state.view.microsteps !== prev.microsteps) for (const k of state.view.taken) state.flashKeys.add(k);
  if (ev.type === "@xstate.snapshot") {
    const step = stepOf(ev, state.steps.length + 1, state.view.events);
    if (step) state.steps = [...state.steps, step];
  }
  // A new snapshot redraws everything at once, so no panel is ever a macrostep behind the state.
  if (state.view.snapshot !== prev.snapshot) render();
  else if (state.view.leaves !== prev.leaves) hooks.renderNow();
  hooks.schedule();
}

let render: () => void = () => {};
/** The full redraw apply() calls for a new snapshot (app.ts's). */
export function setRender(fn: () => void): void {
  render = fn;
}

export function startLive(runId: string): void {
  stopFeed();
  state.mode = "live";
  // Opened again after an HTTP error: from the last event applied (EventSource's own
  // reconnections send Last-Event-ID).
  const after = state.lastId > 0 ? `?after=${state.lastId}` : "";
  const es = apiEvents(`/api/runs/${encodeURIComponent(runId)}/feed${after}`);
  state.feed = es;
  es.addEventListener("inspect", (m) => {
    const ev = parse<FeedEvent>(m);
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
    if (state.feed === es) apply({ type: "gap", lost: Number(parse<{ lost: number }>(m)?.lost) || 0 });
  });
  es.addEventListener("error", () => {
    if (state.feed !== es || es.readyState !== EventSource.CLOSED) return;
    // Closed for good (an HTTP error): open it again later; events already applied are skipped.
    state.retry = setTimeout(() => state.feed === es && startLive(runId), 3000);
  });
  hooks.schedule();
}

/** A stored run's replay: all its events at once, shown at the end (or at the step the URL names). */
export async function startReplay(runId: string, reset: () => void): Promise<void> {
  stopFeed();
  state.mode = "loading";
  reset();
  setNotice("loading the replay…", false);
  const asked = runById(runId);
  let res: Response | undefined;
  let body: (Partial<ReplayBody> & ProblemBody) | null;
  try {
    res = await api(`/api/runs/${encodeURIComponent(runId)}/replay`);
    body = await res.json().catch(() => null);
  } catch (err) {
    body = { error: { message: (err as Error)?.message ?? String(err) } };
  }
  if (state.selected !== runId || state.mode !== "loading") return;
  if (!res?.ok || !Array.isArray(body?.events)) {
    state.mode = "error";
    const e = body?.error;
    return setNotice(`replay failed: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? `HTTP ${res?.status}`}`, true);
  }
  state.mode = "replay";
  setNotice("", false);
  const events = body.events;
  state.steps = stepsOf(events);
  state.replay = { events, pos: events.length, cache: new Map([[0, initialView()]]), key: replayKey(asked) };
  const slider = one<HTMLInputElement>("[data-testid=replay-slider]");
  slider.max = String(events.length);
  const wanted = state.pendingStep !== null ? state.steps[Math.min(state.pendingStep, state.steps.length) - 1] : undefined;
  state.pendingStep = null;
  setPos(wanted ? wanted.pos : events.length);
  refreshReplay(reset);
}

/** The fold of the replay's events[0..i), from the nearest cached view. */
function viewAt(i: number): View {
  const r = state.replay!;
  let base = Math.floor(i / CACHE_EVERY) * CACHE_EVERY;
  while (!r.cache.has(base)) base -= CACHE_EVERY;
  let v = r.cache.get(base)!;
  for (let j = base; j < i; j++) {
    v = reduce(v, r.events[j]);
    if ((j + 1) % CACHE_EVERY === 0) r.cache.set(j + 1, v);
  }
  return v;
}

/** Shows the replay at position `i` (events applied). */
export function setPos(i: number): void {
  const r = state.replay;
  if (!r) return;
  r.pos = Math.max(0, Math.min(r.events.length, i));
  const prev = state.view;
  state.view = viewAt(r.pos);
  if (state.view.microsteps !== prev.microsteps) for (const k of state.view.taken) state.flashKeys.add(k);
  hooks.syncUrl();
  render();
}

/**
 * A stored run shown at the end of its replay that moved on in the store (a waiting run was
 * continued elsewhere) is loaded again; a replay stepped back is left alone. A decision alone
 * does not move a waiting run on: its requests panel shows it.
 */
export function refreshReplay(reset: () => void): void {
  const r = state.replay;
  const run = runById(state.selected);
  if (state.mode !== "replay" || !r || !run || run.live || r.pos !== r.events.length) return;
  if (replayKey(run) !== r.key) void startReplay(run.runId, reset);
}
