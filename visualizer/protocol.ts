/**
 * The visualizer's wire contract, shared by the inspector (in the process that runs the
 * workflow), the server and the page (visualizer/page/src/*.ts is typed against it).
 *
 * Inspection events keep XState's names (`@xstate.actor`, `@xstate.event`,
 * `@xstate.snapshot`, `@xstate.microstep`, `@xstate.action` for emitted events) but carry JSON
 * only: actors are named by session id, and every event names the run (`runId`, the workflow
 * context's `run.id`), so one server can follow many processes and runs at once.
 */

import type { HumanRequest } from "../src/loop/human.js";
import type { ParentLink, RunDamage } from "../src/persistence/run-store.js";
import type { QueueCount } from "../src/queue/counts.js";
import type { DecisionInput, DecisionReceipt } from "../src/runner/decisions.js";

export type { ParentLink, QueueCount };

/** Where a transition of the statechart is drawn: see transitionKey (visualizer/transitions.ts). */
export interface TransitionRef {
  key: string;
  source: string;
  targets: string[];
  /** "" for an eventless (`always`) transition. */
  event: string;
}

interface Base {
  runId: string;
  /** Session id of the actor the event is about (`x:0`...), unique within one process. */
  sessionId: string;
  /** Session id of the run's root actor. */
  rootId: string;
  /** Wall clock (ms) when the inspector saw it. */
  at: number;
}

export interface RootSnapshot {
  value: unknown;
  status: "active" | "done" | "error" | "stopped";
  /** The workflow context (plain JSON, src/loop/context.ts). */
  context: Record<string, unknown>;
  /** Set when status is "error": the actor's error message. */
  error?: string;
}

export type WireEvent =
  | (Base & { type: "@xstate.actor"; src: string; parentId?: string })
  /** An event an actor received (payloads are trimmed to `type`, and `error` for error events). */
  | (Base & { type: "@xstate.event"; sourceId?: string; event: { type: string; error?: string } })
  /** The root actor's snapshot after a macrostep (children's snapshots are not sent). */
  | (Base & { type: "@xstate.snapshot"; event: { type: string }; snapshot: RootSnapshot })
  /** One microstep of the root: its state value and the transitions taken to reach it. */
  | (Base & { type: "@xstate.microstep"; event: { type: string }; value: unknown; transitions: TransitionRef[] })
  /** A fact the workflow emitted (src/loop/facts.ts): history.message, context.compacted, tool.start, tool.outcome, service.error (error as JSON), ... */
  | (Base & { type: "@xstate.action"; action: { type: "xstate.emit"; event: { type: string; [key: string]: unknown } } })
  /** A streamed chunk (StreamChunk from src/core/llm.ts) while the model answers. */
  | (Base & { type: "forge.chunk"; chunk: { type: string; [key: string]: unknown } });

export type WireEventType = WireEvent["type"];

/** POST /api/ingest body. */
export interface IngestBody {
  events: WireEvent[];
}

/** An event as the server's feed delivers it: `id` is the SSE event id, counting the run's events 1, 2, 3... */
export type FeedEvent = WireEvent & { id: number };

export interface RunSummary {
  runId: string;
  workflow: string;
  sessionId?: string;
  /** Events are arriving from a running process. */
  live: boolean;
  /** The run is in the RunStore (its event log can be replayed). */
  stored: boolean;
  /** Replay needs the run's workflow: false (with `why`) when the server does not know it. */
  replayable: boolean;
  why?: string;
  /** Dotted state name ("executingTools.running"), or the store's state for stored runs. */
  state: string;
  /**
   * The store's RunStatus ("active", "waiting", "done", "failed", "cancelled"), for a live run
   * too (from its newest snapshot; "failed" when its actor threw); "damaged" for a stored run
   * that cannot be read (`damaged` says where). The page shows no other.
   */
  status: string;
  /**
   * A stored run whose listed record cannot be read: where (file and line, or table, run and
   * seq) and why. Its workflow and state are "" and its times 0: unknown.
   */
  damaged?: RunDamage;
  /**
   * Model calls so far: the live run's newest snapshot's, or the stored run's latest
   * checkpoint's; null when that checkpoint could not be read (`unreadable` says why).
   */
  iteration: number | null;
  unreadable?: string;
  /**
   * A child run (`workflowTool`): the run and tool call that started it, from the live
   * snapshot's `context.run.parent` or the stored run's start event.
   */
  parent?: ParentLink;
  /**
   * Nesting in the list, which comes in display order (visualizer/run-tree.ts): 0 for a
   * top-level run and for a child whose parent is not listed, 1 for a child under its parent...
   */
  depth: number;
  startedAt: number;
  updatedAt: number;
  /** Events buffered for a live run. */
  events: number;
  /**
   * A waiting run (status "waiting"): the requests of its batch, decided ones with their
   * decision (also those logged since its checkpoint), pending ones without.
   */
  requests?: HumanRequestView[];
}

/** A request for a person as the run list carries it (the tool's schema stays on the server). */
export type HumanRequestView = Omit<HumanRequest, "parameters">;

/** POST /api/runs/:runId/decisions body: callId may be left out when one request is pending. */
export type DecisionBody = DecisionInput;

/**
 * Its 200 answer: the decision is recorded (`duplicate`: it already was). Errors are
 * `{ error: { code, message, problem?, callId?, expiresInMs? } }`: 400 malformed, 404 no store
 * or no run, 409 refused (`problem` from HumanDecisionError: already_decided, invalid_args,
 * wrong_kind, unknown_call, not_waiting) or the run held by a live runner (`FORGE_RUN_LOCKED`).
 */
export type DecisionReply = DecisionReceipt;

/** GET /api/runs/:runId/replay: the run re-driven from its event log, as the live feed would have shown it. */
export interface ReplayBody {
  runId: string;
  workflow: string;
  /** The replay's final state ("done", "failed", "cancelled", "waiting", "incomplete"). */
  state: string;
  events: WireEvent[];
}

/** GET /api/graph: the statechart laid out once on the server. Coordinates are absolute, in px. */
export interface GraphLayout {
  machineId: string;
  width: number;
  height: number;
  /** Parents come before their children. */
  nodes: LayoutNode[];
  edges: LayoutEdge[];
}

export interface LayoutNode {
  /** The state node's id: "workflow.compacting.checking"; "workflow.*" is the any-state source of root transitions. */
  id: string;
  /** The dotted state name without the machine id ("compacting.checking"), as stateName() prints it. */
  path: string;
  label: string;
  parent: string | null;
  kind: "compound" | "atomic" | "final" | "any";
  /** The parent's initial state. */
  initial: boolean;
  /** Services invoked while in this state ("infer"). */
  invokes: string[];
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutEdge {
  /** transitionKey(): matches TransitionRef.key in microsteps. */
  key: string;
  source: string;
  target: string;
  /** "" for eventless transitions. */
  event: string;
  guard?: string;
  actions: string[];
  /** "always [needsRetry] / recordRetry". */
  label: string;
  /**
   * What the drawing prints when it is not `label`: a transition into a state many states fail
   * to (`failed`) is drawn from the any-state node instead of its source, and names its source
   * ("validating: always [needsRetry && isRetryBudgetExhausted] / failRetries").
   */
  caption?: string;
  /** The node the polyline starts at when it is not `source` (the any-state node, see caption). */
  drawnFrom?: string;
  /**
   * The polyline, start to end (the end touches the target's border). Transitions with the same
   * start and target share one, their labels stacked one line each.
   */
  points: { x: number; y: number }[];
  labelBox: { x: number; y: number; width: number; height: number };
}

/** SSE `queues` on /api/feed (`forge-ts visualize --redis`): every forge-ts job queue's counts. */
export interface QueuesBody {
  queues: QueueCount[];
  /** Redis unreachable (the counts wait for it), or null. */
  error: string | null;
}
