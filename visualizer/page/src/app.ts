// The page: the run list, one run's events (live feed or replay, feeds.ts) folded by view.ts,
// drawn by graph.ts and the panel modules; the URL (url-state.ts) names the run, the step, the
// compared run and the filters. Data reaches the DOM only through textContent and attributes.
import type { GraphLayout, RunSummary } from "../../protocol.js";
import { api } from "./api.js";
import { renderCompare, renderCompareChoice } from "./compare.js";
import { renderDiff, resetDiff } from "./diff-panel.js";
import { byId, el, one } from "./dom.js";
import { connectRuns, refreshReplay, setPos, setRender, startLive, startReplay, stopFeed } from "./feeds.js";
import { drawGraph, flash, setActive, setCounts, setRecent } from "./graph.js";
import { renderHuman } from "./human.js";
import { renderLineage } from "./lineage.js";
import { renderBar, renderPanels, renderSnapshot, updateCounters, wireSnapshot } from "./panels.js";
import { patchSelectedRun, renderRuns, showRunFilters, wireRunFilters } from "./run-list.js";
import { FINAL, hooks, runById, setNotice, shownStep, state } from "./state.js";
import { lastStepOfIteration } from "./steps.js";
import { renderTimeline, resetTimeline, showTimelineFind, wireTimeline } from "./timeline.js";
import { formatHash, parseHash } from "./url-state.js";
import { initialView } from "./view.js";
import { applyZoom, followActive, wireZoomAndPan } from "./zoom.js";

// ---------------------------------------------------------------- rendering

let pending = false;
function schedule(): void {
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
function renderNow(): void {
  const v = state.view;
  if (state.graph) setActive(state.graph, v.leaves);
  const cur = byId("current-state");
  const text = v.leaves.join(", ") || "—";
  if (cur.textContent !== text) cur.textContent = text;
  cur.className = v.leaves.length === 1 && FINAL.has(v.leaves[0]!) ? `s-${v.leaves[0]}` : "s-active";
  updateCounters(v.snapshot?.context);
  patchSelectedRun();
}

function render(): void {
  pending = false;
  const v = state.view;
  const run = runById(state.selected);
  renderBar(run);
  renderNow();
  if (state.graph) {
    setCounts(state.graph, v.edgeCounts);
    setRecent(state.graph, v.taken);
    if (state.flashKeys.size) flash(state.graph, state.flashKeys);
    followActive();
  }
  state.flashKeys.clear();
  renderHuman(one("[data-testid=human]"), run);
  renderLineage(byId("lineage"), state.selected, run, state.runs);
  renderPanels(v, run);
  renderTimeline(v);
  renderDiff();
  renderSnapshot(v);
  renderCompareChoice();
  renderCompare();
  const lost = byId("lost");
  lost.hidden = !v.lost;
  lost.textContent = `${v.lost} events were lost; the history was rebuilt from a snapshot`;
}

// ---------------------------------------------------------------- URL

/** The address follows the view, replaced (not pushed): the back button leaves the page. */
function syncUrl(): void {
  const r = state.replay;
  const step = state.mode === "replay" && r ? (r.pos < r.events.length ? shownStep() : undefined) : (state.step ?? undefined);
  const hash = formatHash({ run: state.explicit ? (state.selected ?? undefined) : undefined, step: step || undefined, compare: state.compare ?? undefined, filter: state.filter, hide: [...state.hiddenKinds].sort(), find: state.find });
  if (location.hash !== hash && !(hash === "" && location.hash === "#")) history.replaceState(null, "", hash || `${location.pathname}${location.search}`);
}

/** Applies the address: a link followed, a reload, a hand-edited hash. */
function fromUrl(): void {
  const u = parseHash(location.hash);
  state.filter = u.filter;
  state.hiddenKinds = new Set(u.hide);
  state.find = u.find;
  state.compare = u.compare ?? null;
  showRunFilters();
  showTimelineFind();
  if (u.run && u.run !== state.selected) {
    state.pendingStep = u.step ?? null;
    select(u.run, true);
  } else if (u.step !== undefined) pickStep(u.step);
  renderRuns();
  schedule();
}

// ---------------------------------------------------------------- selection

function onRuns(runs: RunSummary[]): void {
  state.runs = runs;
  renderRuns();
  if (!state.explicit) autoFollow();
  else if (state.mode === "waiting" && runById(state.selected)) startSelected();
  refreshReplay(resetView);
  schedule();
}

const newestFirst = (runs: RunSummary[]) => [...runs].sort((a, b) => (Number(b.startedAt) || 0) - (Number(a.startedAt) || 0) || String(b.runId).localeCompare(String(a.runId)));

/**
 * Follow the newest live run: a newer one than the run shown (never back to an older one when
 * the run shown finishes); the run shown followed live if it turned live while replayed. With
 * no live run and none shown, the newest run.
 */
function autoFollow(): void {
  // Top-level runs only: a child run is followed from its parent's page (it would take the
  // view away from a parent that goes on after it).
  const top = newestFirst(state.runs.filter((r) => !r.depth));
  const live = top.find((r) => r.live);
  const shownRun = runById(state.selected);
  if (!live) {
    if (!shownRun && top[0]) select(top[0].runId, false);
    return;
  }
  if (live.runId !== state.selected) {
    if (!shownRun || (Number(live.startedAt) || 0) >= (Number(shownRun.startedAt) || 0)) select(live.runId, false);
  } else if (state.mode !== "live") {
    resetView();
    startLive(live.runId);
  }
}

function select(runId: string, explicit: boolean): void {
  if (explicit) state.explicit = true;
  if (runId !== state.selected || state.mode === "error") {
    stopFeed();
    state.selected = runId;
    if (state.compare === runId) state.compare = null;
    resetView();
    startSelected();
  }
  syncUrl();
  renderRuns();
}

function resetView(): void {
  state.view = initialView();
  state.steps = [];
  state.step = null;
  state.lastId = -Infinity;
  state.replay = null;
  state.notice = "";
  state.flashKeys.clear();
  resetTimeline();
  resetDiff();
  renderNow();
  schedule();
}

function startSelected(): void {
  const run = runById(state.selected);
  if (!run) {
    state.mode = "waiting";
    return schedule();
  }
  if (!run.live && run.stored && run.replayable) return void startReplay(run.runId, resetView);
  startLive(run.runId);
  if (state.pendingStep !== null) state.step = state.pendingStep;
  state.pendingStep = null;
  if (!run.live && run.stored) setNotice(`This run cannot be replayed: ${run.why ?? "unknown workflow"}`, false);
}

/** Shows step `n`: in a replay the whole view goes there; live, its context diff. */
function pickStep(n: number): void {
  const steps = state.steps;
  if (!steps.length) return void (state.pendingStep = n);
  const k = Math.max(1, Math.min(steps.length, n));
  if (state.mode === "replay") setPos(steps[k - 1]!.pos);
  else state.step = k === steps.length ? null : k;
  syncUrl();
  schedule();
}

// ---------------------------------------------------------------- wiring

function wireControls(): void {
  const slider = one<HTMLInputElement>("[data-testid=replay-slider]");
  slider.addEventListener("input", () => setPos(Number(slider.value)));
  byId("mode-replay").addEventListener("click", () => state.selected && void startReplay(state.selected, resetView));
  byId("mode-live").addEventListener("click", () => {
    if (!state.selected) return;
    resetView();
    startLive(state.selected);
  });
  byId("step-prev").addEventListener("click", () => pickStep(shownStep() - 1));
  byId("step-next").addEventListener("click", () => pickStep(shownStep() + 1));
  const compare = byId<HTMLSelectElement>("compare-with");
  compare.addEventListener("change", () => {
    state.compare = compare.value || null;
    syncUrl();
    schedule();
  });
  byId("compare-close").addEventListener("click", () => {
    state.compare = null;
    syncUrl();
    schedule();
  });
  wireSnapshot();
  wireRunFilters();
  wireTimeline((entry) => {
    const step = lastStepOfIteration(state.steps, entry.iteration);
    if (step) pickStep(step.n);
  });
  addEventListener("hashchange", fromUrl);
}

async function loadGraph(): Promise<void> {
  try {
    const res = await api("/api/graph");
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    state.layout = (await res.json()) as GraphLayout;
    state.graph = drawGraph(byId<SVGSVGElement & HTMLElement>("graph"), state.layout);
    applyZoom();
    renderNow();
    schedule();
  } catch (err) {
    byId("graph-box").append(el("p", "notice err", `the statechart could not be loaded: ${(err as Error)?.message ?? err}`));
  }
}

async function loadInfo(): Promise<void> {
  try {
    const res = await api("/api/info");
    const info = (await res.json()) as { pageBytes?: number; version?: string; store?: string | null; error?: { message?: string } };
    if (res.status === 401 || res.status === 403) return setNotice(`${info?.error?.message ?? `HTTP ${res.status}`}`, true);
    if (typeof info.pageBytes === "number") one("[data-testid=page-weight]").textContent = `page ${Math.round(info.pageBytes / 1024)} KB, no external requests`;
    if (info.version) byId("version").textContent = `visualizer ${info.version}`;
    byId("store").textContent = info.store ? `store: ${info.store}` : "no run store";
  } catch {
    /* the footer stays as it is */
  }
}

Object.assign(hooks, { schedule, renderNow, syncUrl, select });
setRender(render);

// For debugging and tests only: the current reduced view and steps.
Object.defineProperty(window, "forgeViz", {
  value: Object.freeze({
    get view() {
      return state.view;
    },
    get steps() {
      return state.steps;
    },
  }),
});

wireControls();
wireZoomAndPan();
fromUrl();
void loadInfo();
void loadGraph();
connectRuns(onRuns);
schedule();
