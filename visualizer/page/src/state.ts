// The page's one mutable state, shared by its modules; app.ts owns the render loop and sets
// the hooks the others call to ask for a redraw (modules never import app.ts: no cycles).
import type { GraphLayout, RunSummary, WireEvent } from "../../protocol.js";
import { NO_RUN_FILTER, type RunFilter } from "./filters.js";
import type { Graph } from "./graph.js";
import type { Step, View } from "./types.js";
import { initialView } from "./view.js";

export type Mode = "none" | "waiting" | "live" | "loading" | "replay" | "error";

export interface Replay {
  events: WireEvent[];
  pos: number;
  /** Views at every CACHE_EVERY-th position, to step back without folding from the start. */
  cache: Map<number, View>;
  /** The run as listed when the replay was asked for: a later change loads it again. */
  key: string;
}

export const state = {
  runs: [] as RunSummary[],
  selected: null as string | null,
  /** The user picked the run (click or URL): no auto-follow. */
  explicit: false,
  mode: "none" as Mode,
  view: initialView(),
  /** The run's steps (snapshots) so far: a live run's as they arrive, a replay's all at once. */
  steps: [] as Step[],
  /** The step picked (a timeline entry, the step buttons, #step=); null follows the latest. */
  step: null as number | null,
  /** A step asked for by the URL before the run's events are in. */
  pendingStep: null as number | null,
  compare: null as string | null,
  filter: { ...NO_RUN_FILTER } as RunFilter,
  hiddenKinds: new Set<string>(),
  find: "",
  layout: null as GraphLayout | null,
  graph: null as Graph | null,
  feed: null as EventSource | null,
  lastId: -Infinity,
  retry: undefined as ReturnType<typeof setTimeout> | undefined,
  replay: null as Replay | null,
  notice: "",
  noticeError: false,
  flashKeys: new Set<string>(),
  /** "fit": the whole chart in its pane, refitted as the pane changes size; "manual": the zoom buttons' scale. */
  zoom: { mode: "fit" as "fit" | "manual", scale: 1 },
  userScrolledAt: 0,
};

/** Set by app.ts. */
export const hooks = {
  /** A redraw on the next frame. */
  schedule: () => {},
  /** Active state and counters now (between frames). */
  renderNow: () => {},
  /** The URL follows the state (run, step, compare, filters). */
  syncUrl: () => {},
  select: (_runId: string, _explicit: boolean) => {},
};

export const runById = (id: string | null): RunSummary | undefined => (id === null ? undefined : state.runs.find((r) => r.runId === id));

export const FINAL = new Set(["done", "failed", "cancelled"]);

export function setNotice(text: string, isError: boolean): void {
  state.notice = text;
  state.noticeError = isError;
  hooks.schedule();
}

/** The step whose diff is shown: the one picked, the replay position's, or the latest. */
export function shownStep(): number {
  if (state.mode === "replay" && state.replay) {
    let n = 0;
    for (const s of state.steps) if (s.pos <= state.replay.pos) n = s.n;
    return n;
  }
  return state.step ?? state.steps.length;
}
