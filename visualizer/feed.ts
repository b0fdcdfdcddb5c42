/**
 * The visualizer's live feed: inspection events from any number of processes and runs, each
 * run in a bounded buffer, its events numbered 1, 2, 3... (the SSE event id), so a browser that
 * reconnects with Last-Event-ID gets exactly what it missed.
 *
 * A buffer over its bounds drops its oldest events but keeps the last root snapshot among
 * them: a browser resuming from before the cut is told how many events it lost and gets that
 * snapshot, so its panels are right even though its timeline has a hole.
 */
import { stateName } from "../src/loop/state-name.js";
import { isRunId, statusOfState } from "../src/persistence/run-store.js";
import { redactionMapIn, type RedactionMap } from "../src/telemetry/redact-run.js";
import type { FeedEvent, RunSummary, WireEvent } from "./protocol.js";
import { redactWireEvent } from "./redact-wire.js";

export interface FeedOptions {
  /** Events kept per run (default 20,000). */
  maxEventsPerRun?: number;
  /** Bytes of event JSON kept per run (default 32 MiB). */
  maxBytesPerRun?: number;
  /** Runs kept; the least recently updated finished runs go first (default 200). */
  maxRuns?: number;
}

/** What a run's feed has after a given event id. */
export interface FeedSlice {
  /** Events dropped by the buffer that came after the given id (0: nothing was lost). */
  lost: number;
  events: FeedEvent[];
}

type LiveSummary = Omit<RunSummary, "stored" | "replayable" | "why" | "unreadable" | "depth">;

interface RunBuffer {
  summary: LiveSummary;
  events: FeedEvent[];
  sizes: number[];
  bytes: number;
  /** The id of the newest event (ids count the run's events). */
  lastId: number;
  /** Events with ids up to this were dropped. */
  droppedThrough: number;
  /** The newest root snapshot among the dropped events. */
  base?: FeedEvent;
  /** The run's redaction map, once a snapshot showed it: emitted events and chunks are masked with it. */
  redact?: RedactionMap;
}

export type FeedListener = (event: FeedEvent) => void;

export class Feed {
  readonly #runs = new Map<string, RunBuffer>();
  readonly #listeners = new Map<string, Set<FeedListener>>();
  readonly #changeListeners = new Set<() => void>();
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #maxRuns: number;

  constructor(options: FeedOptions = {}) {
    this.#maxEvents = options.maxEventsPerRun ?? 20_000;
    this.#maxBytes = options.maxBytesPerRun ?? 32 * 1024 * 1024;
    this.#maxRuns = options.maxRuns ?? 200;
  }

  /** Take events in, in the order their process sent them. */
  ingest(events: readonly WireEvent[]): void {
    for (const raw of events) {
      const buffer = this.#buffer(raw);
      // Masked again here: an inspector of another process (an older one, a third-party sender) may not have.
      if (raw.type === "@xstate.snapshot") buffer.redact = redactionMapIn(raw.snapshot.context) ?? buffer.redact;
      const event = redactWireEvent(raw, buffer.redact);
      const fed = { ...event, id: ++buffer.lastId } as FeedEvent;
      const size = JSON.stringify(event).length;
      buffer.events.push(fed);
      buffer.sizes.push(size);
      buffer.bytes += size;
      summarize(buffer.summary, fed);
      this.#trim(buffer);
      for (const listener of this.#listeners.get(event.runId) ?? []) listener(fed);
    }
    if (events.length > 0) {
      this.#evictRuns();
      for (const listener of this.#changeListeners) listener();
    }
  }

  /** Summaries of the runs the feed has, most recently updated first. */
  runs(): LiveSummary[] {
    return [...this.#runs.values()].map((b) => ({ ...b.summary, events: b.events.length })).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  has(runId: string): boolean {
    return this.#runs.has(runId);
  }

  /** The run's events with ids above `afterId` (all of them for 0). */
  since(runId: string, afterId = 0): FeedSlice {
    const buffer = this.#runs.get(runId);
    if (!buffer) return { lost: 0, events: [] };
    const lost = Math.max(0, buffer.droppedThrough - afterId);
    const kept = buffer.events.filter((e) => e.id > afterId);
    const base = lost > 0 && buffer.base && buffer.base.id > afterId ? [buffer.base] : [];
    return { lost, events: [...base, ...kept] };
  }

  /** Every event of `runId` from now on. */
  subscribe(runId: string, listener: FeedListener): () => void {
    let set = this.#listeners.get(runId);
    if (!set) this.#listeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(runId);
    };
  }

  /** Called after every ingested batch (the run list changed). */
  onChange(listener: () => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  #buffer(event: WireEvent): RunBuffer {
    let buffer = this.#runs.get(event.runId);
    if (!buffer) {
      buffer = {
        summary: { runId: event.runId, workflow: "", live: true, state: "", status: "active", iteration: 0, startedAt: event.at, updatedAt: event.at, events: 0 },
        events: [],
        sizes: [],
        bytes: 0,
        lastId: 0,
        droppedThrough: 0,
      };
      this.#runs.set(event.runId, buffer);
    }
    return buffer;
  }

  #trim(buffer: RunBuffer): void {
    // The newest event always stays, whatever its size.
    while (buffer.events.length > 1 && (buffer.events.length > this.#maxEvents || buffer.bytes > this.#maxBytes)) {
      const dropped = buffer.events.shift()!;
      buffer.bytes -= buffer.sizes.shift()!;
      buffer.droppedThrough = dropped.id;
      if (dropped.type === "@xstate.snapshot") buffer.base = dropped;
    }
  }

  #evictRuns(): void {
    if (this.#runs.size <= this.#maxRuns) return;
    const finished = [...this.#runs.values()].filter((b) => !b.summary.live).sort((a, b) => a.summary.updatedAt - b.summary.updatedAt);
    for (const b of finished) {
      if (this.#runs.size <= this.#maxRuns) break;
      if (this.#listeners.has(b.summary.runId)) continue; // someone is watching it
      this.#runs.delete(b.summary.runId);
    }
  }
}

/** Keep the run list's line for a run up to date with its newest event. */
function summarize(summary: LiveSummary, event: FeedEvent): void {
  summary.updatedAt = event.at;
  if (event.type === "@xstate.microstep") summary.state = stateName(event.value);
  if (event.type !== "@xstate.snapshot") return;
  const { snapshot } = event;
  const context = snapshot.context as { run?: { workflow?: string; startedAt?: number; parent?: { runId?: unknown; callId?: unknown } }; iteration?: number };
  summary.state = stateName(snapshot.value);
  // The store's words (RunStatus): a finished run is "done", "failed" or "cancelled" and one at
  // awaitingHuman "waiting", as its stored line says; an actor that threw has "failed"; one
  // stopped from outside is where the store left it (active or waiting: it can be resumed).
  summary.status = snapshot.status === "error" ? "failed" : statusOfState(summary.state, snapshot.status === "done");
  summary.live = snapshot.status === "active";
  if (typeof context.run?.workflow === "string") summary.workflow = context.run.workflow;
  if (typeof context.run?.startedAt === "number") summary.startedAt = context.run.startedAt;
  if (typeof context.iteration === "number") summary.iteration = context.iteration;
  // A child run's link travels in its snapshots (the inspector sends nothing else about it);
  // the ingest checks only the event's frame, so the link is checked here.
  const parent = context.run?.parent;
  if (parent && isRunId(parent.runId) && typeof parent.callId === "string" && parent.callId.length <= 256) {
    summary.parent = { runId: parent.runId, callId: parent.callId };
  }
}
