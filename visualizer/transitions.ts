/**
 * Naming the statechart's transitions the same way in the drawing (layout.ts walks the machine
 * definition) and in the live feed (wire.ts reads the transitions XState reports per microstep),
 * so the page can light up the edge a run just took.
 */
import type { AnyStateNode } from "xstate";
import type { TransitionRef } from "./protocol.js";

/** The parts of XState's TransitionDefinition read here. */
export interface TransitionLike {
  source: AnyStateNode;
  target?: readonly AnyStateNode[] | undefined;
  eventType: string;
  guard?: unknown;
  actions: readonly unknown[];
}

/**
 * `<source id>:<event or "always">:<index among the source's transitions for that event>`.
 * Structural, so it is the same for every instance of the machine (the runner's copy has the
 * workflow's tools and services; the drawing uses the bare one).
 */
export function transitionKey(t: TransitionLike): string {
  const source = t.source as AnyStateNode & { always?: readonly unknown[] };
  if (t.eventType === "") return `${source.id}:always:${(source.always ?? []).indexOf(t)}`;
  const list = (source.transitions.get(t.eventType) ?? []) as readonly unknown[];
  return `${source.id}:${t.eventType}:${list.indexOf(t)}`;
}

export function transitionRef(t: TransitionLike): TransitionRef {
  return { key: transitionKey(t), source: t.source.id, targets: (t.target ?? []).map((s) => s.id), event: t.eventType };
}

/** A guard as written in the machine: "needsRetry", "needsRetry && isRetryBudgetExhausted", "!x". */
export function guardLabel(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") {
    const parts = ((guard as { guards?: unknown[] }).guards ?? []).map((g) => guardLabel(g) ?? "?");
    if (guard.name === "not") return `!${parts[0] ?? "?"}`;
    if (guard.name === "and" || guard.name === "or") return parts.map((p) => (p.includes(" ") ? `(${p})` : p)).join(guard.name === "and" ? " && " : " || ");
    return guard.name || "guard";
  }
  if (typeof guard === "object" && typeof (guard as { type?: unknown }).type === "string") return (guard as { type: string }).type;
  return "guard";
}

/** Named actions of a transition ("recordRetry"); inline functions show as their name, if any. */
export function actionLabels(actions: readonly unknown[]): string[] {
  return actions.flatMap((a) => {
    if (typeof a === "string") return [a];
    if (a && typeof a === "object" && typeof (a as { type?: unknown }).type === "string") return [(a as { type: string }).type];
    if (typeof a === "function" && a.name) return [a.name];
    return [];
  });
}

/** What the drawing prints on an edge: "always [needsRetry] / recordRetry". */
export function transitionLabel(t: TransitionLike): string {
  const event = t.eventType === "" ? "always" : shortEvent(t.eventType);
  const guard = guardLabel(t.guard);
  const actions = actionLabels(t.actions);
  return `${event}${guard ? ` [${guard}]` : ""}${actions.length ? ` / ${actions.join(", ")}` : ""}`;
}

/** `xstate.done.actor.infer` → `done: infer`, the way a reader names it. */
function shortEvent(type: string): string {
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  return m ? `${m[1]}: ${m[2]}` : type;
}
