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
import { redactWireEvent } from "./redact-wire.js";
import { mergeRedactionMaps, redactionMapIn, type RedactionMap } from "../src/telemetry/redact-run.js";

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

/** Options of {@link wireSerializer}. */
export interface WireSerializerOptions {
  /** Argument names to mask besides those each run carries (`context.run.redact`): a replay passes its workflow's. */
  redact?: RedactionMap;
}

/**
 * One serializer per process or replay: it remembers which root session is which run, and
 * which arguments each run masks (its tools' `redact`), so nothing leaves the process unmasked.
 */
export function wireSerializer(now: () => number = Date.now, options: WireSerializerOptions = {}): WireSerializer {
  const runOfRoot = new Map<string, string>();
  /** Each root's redaction map, from its machine input or a snapshot's context. */
  const redactOfRoot = new Map<string, RedactionMap | undefined>();
  const redactionOf = (event: InspectionEvent): RedactionMap | undefined => {
    if (event.actorRef.sessionId === event.rootId) {
      const seen = redactionInside(event);
      if (seen) redactOfRoot.set(event.rootId, seen);
    }
    return mergeRedactionMaps(redactOfRoot.get(event.rootId), options.redact);
  };
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
    redactionOf(event);
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
    const redact = mergeRedactionMaps(redactOfRoot.get(event.rootId), options.redact);
    return [...(held ?? []), { event, at }].flatMap((e) => {
      const wire = toWire(e.event, runId, e.at);
      return wire ? [redactWireEvent(wire, redact)] : [];
    });
  }) as WireSerializer;

  serialize.chunk = (runId, chunk) => {
    const rootId = rootOfRun.get(runId);
    if (!rootId) return undefined;
    const wire: WireEvent = { runId, sessionId: rootId, rootId, at: now(), type: "forge.chunk", chunk: { ...chunk } };
    return redactWireEvent(wire, mergeRedactionMaps(redactOfRoot.get(rootId), options.redact));
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
      const json = emitted.type === "service.error" ? { ...emitted, error: errorToJSON(emitted.error) } : emitted;
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

/** The redaction map an event of a root shows: in its snapshot's context, or its init event's input. */
function redactionInside(event: InspectionEvent): RedactionMap | undefined {
  if (event.type === "@xstate.snapshot" || event.type === "@xstate.microstep") return redactionMapIn((event.snapshot as { context?: unknown }).context);
  if (event.type === "@xstate.event") {
    const input = (event.event as { input?: { redact?: unknown } }).input;
    return input ? redactionMapIn({ run: { redact: input.redact } }) : undefined;
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
