// The page's own shapes, beside the wire's (visualizer/protocol.ts).
import type { WireEvent } from "../../protocol.js";

/**
 * The workflow context as the wire carries it: plain JSON whose fields the page reads
 * defensively (a run recorded by another version may lack some), so it is loosely typed here
 * rather than as src/loop/context.ts's WorkflowContext.
 */
export type LooseContext = Record<string, any>;

export interface ViewSnapshot {
  value: unknown;
  status: string;
  context: LooseContext;
  error?: string;
}

/** One line of the message timeline. */
export interface Entry {
  kind: string;
  iteration: number;
  label: string;
  text: string;
  who?: string;
  /** Made from a Message (not a rescue, compaction or service error). */
  fromMessage?: boolean;
}

/** The page's own event: the server's buffer dropped `lost` events. */
export interface GapEvent {
  type: "gap";
  lost: number;
}

export type ViewEvent = WireEvent | GapEvent;

export interface View {
  /** Events applied. */
  events: number;
  value: unknown;
  /** Dotted paths of the active leaves. */
  leaves: string[];
  /** The latest root snapshot. */
  snapshot: ViewSnapshot | null;
  /** TransitionRef.key: times taken. */
  edgeCounts: Record<string, number>;
  /** Keys of the latest microstep. */
  taken: string[];
  microsteps: number;
  /** Immutable entries, appended (rescues inserted). */
  timeline: Entry[];
  /** The answer being streamed. */
  stream: { iteration: number; text: string } | null;
  /** Iterations with a rescue entry. */
  rescued: number[];
  /** The history before the first snapshot is in. */
  seeded: boolean;
  /** Snapshots that rebuild the history after a gap. */
  resync: number;
  /** Events the server dropped. */
  lost: number;
  /** The tool call in flight. */
  running: { index: number; tool: string } | null;
}

/** A macrostep of a run: its snapshot, numbered from 1, and where it sits in the run's events. */
export interface Step {
  n: number;
  /** Events up to and including the snapshot: the replay position that shows this step. */
  pos: number;
  /** The event that caused the macrostep ("llm.response", "xstate.done.actor.infer"...). */
  cause: string;
  leaves: string[];
  status: string;
  iteration: number;
  context: LooseContext;
}
