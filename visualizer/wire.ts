/**
 * XState inspection events of a workflow run, as JSON for the visualizer (protocol.ts). Used by
 * the inspector in the process that runs the workflow and by the server's replay of stored runs,
 * so a replay shows exactly what the live feed showed.
 *
 * Only what the page draws goes on the wire: the root actor's snapshots, microsteps (with the
 * transitions taken) and emitted events, every actor's creation, and the events the root
 * receives (trimmed to their type: a done event carries whole histories).
 */
import type { ActorRefLike, InspectionEvent } from "xstate";
import { describeError, errorToJSON } from "../src/core/errors.js";
import type { StreamChunk } from "../src/core/llm.js";
import type { RootSnapshot, WireEvent } from "./protocol.js";
import { transitionRef, type TransitionLike } from "./transitions.js";

export type WireSerializer = {
  /**
   * The wire form of an inspection event: [] for one the page does not use, or while the run's
   * id is not known yet (those are held and come out ahead of the first event that knows it).
   */
  (event: InspectionEvent): WireEvent[];
  /** A streamed chunk of the run `runId` (the runner's onChunk). */
  chunk(runId: string, chunk: StreamChunk): WireEvent | undefined;
};

interface RunContextLike {
  run?: { id?: unknown };
}

/** One serializer per process or replay: it remembers which root session is which run. */
export function wireSerializer(now: () => number = Date.now): WireSerializer {
  const runOfRoot = new Map<string, string>();
  const rootOfRun = new Map<string, string>();

  /** Events of a root whose run id is not known yet (its @xstate.actor comes first). */
  const waiting = new Map<string, { event: InspectionEvent; at: number }[]>();

  const runIdOf = (event: InspectionEvent): string | undefined => {
    const { rootId } = event;
    const known = runOfRoot.get(rootId);
    if (known) return known;
    const id = runIdInside(event);
    if (id === undefined) return undefined;
    runOfRoot.set(rootId, id);
    rootOfRun.set(id, rootId);
    return id;
  };

  const serialize = ((event: InspectionEvent): WireEvent[] => {
    const at = now();
    const runId = runIdOf(event);
    if (!runId) {
      const held = waiting.get(event.rootId) ?? [];
      // A root that never names its run is not a workflow run: keep a few, not all.
      if (held.length < 16) held.push({ event, at });
      waiting.set(event.rootId, held);
      return [];
    }
    const held = waiting.get(event.rootId);
    waiting.delete(event.rootId);
    return [...(held ?? []), { event, at }].flatMap((e) => {
      const wire = toWire(e.event, runId, e.at);
      return wire ? [wire] : [];
    });
  }) as WireSerializer;

  serialize.chunk = (runId, chunk) => {
    const rootId = rootOfRun.get(runId);
    if (!rootId) return undefined;
    return { runId, sessionId: rootId, rootId, at: now(), type: "forge.chunk", chunk: { ...chunk } };
  };
  return serialize;
}

function toWire(event: InspectionEvent, runId: string, at: number): WireEvent | undefined {
  const { actorRef, rootId } = event;
  const isRoot = actorRef.sessionId === rootId;
  const base = { runId, sessionId: actorRef.sessionId, rootId, at };
  switch (event.type) {
    case "@xstate.actor": {
      const parent = (actorRef as { _parent?: ActorRefLike })._parent;
      return { ...base, type: "@xstate.actor", src: srcName(actorRef), ...(parent ? { parentId: parent.sessionId } : {}) };
    }
    case "@xstate.event": {
      if (!isRoot) return undefined;
      const e = event.event as { type: string; error?: unknown };
      const trimmed = e.type.startsWith("xstate.error.") ? { type: e.type, error: describeError(e.error) } : { type: e.type };
      return { ...base, type: "@xstate.event", ...(event.sourceRef ? { sourceId: event.sourceRef.sessionId } : {}), event: trimmed };
    }
    case "@xstate.snapshot":
      if (!isRoot) return undefined;
      return { ...base, type: "@xstate.snapshot", event: { type: event.event.type }, snapshot: rootSnapshot(event.snapshot) };
    case "@xstate.microstep": {
      if (!isRoot) return undefined;
      const transitions = ((event as { _transitions?: TransitionLike[] })._transitions ?? []).map(transitionRef);
      return { ...base, type: "@xstate.microstep", event: { type: event.event.type }, value: (event.snapshot as { value?: unknown }).value, transitions };
    }
    case "@xstate.action": {
      if (!isRoot || event.action.type !== "xstate.emit") return undefined;
      const emitted = (event.action.params as { event?: { type: string; [key: string]: unknown } } | undefined)?.event;
      if (!emitted) return undefined;
      // A service error is a live Error: the page gets its JSON form.
      const json = emitted.type === "serviceError" ? { ...emitted, error: errorToJSON(emitted.error) } : emitted;
      return { ...base, type: "@xstate.action", action: { type: "xstate.emit", event: json } };
    }
    default:
      return undefined;
  }
}

/**
 * The run id an event of a root shows: its snapshot's context, or the machine input of its
 * init event (the root's snapshot cannot be read while it initializes).
 */
function runIdInside(event: InspectionEvent): string | undefined {
  if (event.actorRef.sessionId !== event.rootId) return undefined;
  if (event.type === "@xstate.snapshot" || event.type === "@xstate.microstep") {
    const id = (event.snapshot as { context?: RunContextLike }).context?.run?.id;
    return typeof id === "string" ? id : undefined;
  }
  if (event.type === "@xstate.event") {
    const input = (event.event as { input?: { runId?: unknown } }).input;
    return typeof input?.runId === "string" ? input.runId : undefined;
  }
  return undefined;
}

function srcName(actorRef: ActorRefLike): string {
  const src = (actorRef as { src?: unknown }).src;
  if (typeof src === "string") return src;
  const id = (src as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : ((actorRef as { id?: string }).id ?? "actor");
}

function rootSnapshot(snapshot: unknown): RootSnapshot {
  const s = snapshot as { value?: unknown; status: RootSnapshot["status"]; context?: Record<string, unknown>; error?: unknown };
  return {
    value: s.value,
    status: s.status,
    context: s.context ?? {},
    ...(s.status === "error" ? { error: describeError(s.error) } : {}),
  };
}
