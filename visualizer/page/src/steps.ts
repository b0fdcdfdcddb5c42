// A run's steps: one per root snapshot (a macrostep), what the context diff and the
// #step= links count.
import type { WireEvent } from "../../protocol.js";
import type { LooseContext, Step } from "./types.js";
import { stateLeaves } from "./view.js";

/** The step a snapshot event makes, as the n-th step at replay position `pos`; null for other events. */
export function stepOf(e: WireEvent, n: number, pos: number): Step | null {
  if (e.type !== "@xstate.snapshot" || !e.snapshot || typeof e.snapshot !== "object") return null;
  const context: LooseContext = e.snapshot.context && typeof e.snapshot.context === "object" ? e.snapshot.context : {};
  return {
    n,
    pos,
    cause: String(e.event?.type ?? ""),
    leaves: stateLeaves(e.snapshot.value),
    status: String(e.snapshot.status ?? ""),
    iteration: typeof context.iteration === "number" ? context.iteration : 0,
    context,
  };
}

/** Every step of a run's events (a replay's). */
export function stepsOf(events: readonly WireEvent[]): Step[] {
  const steps: Step[] = [];
  events.forEach((e, i) => {
    const s = stepOf(e, steps.length + 1, i + 1);
    if (s) steps.push(s);
  });
  return steps;
}

/** The number of the last step at or before replay position `pos` (0: none yet). */
export function stepAt(steps: readonly Step[], pos: number): number {
  let lo = 0;
  let hi = steps.length;
  // Steps are in position order: the count of those with pos <= `pos`.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid]!.pos <= pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The last step of iteration `iteration` (a timeline entry's), or undefined. */
export function lastStepOfIteration(steps: readonly Step[], iteration: number): Step | undefined {
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i]!.iteration === iteration) return steps[i];
  return undefined;
}
