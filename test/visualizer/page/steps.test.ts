/** A run's steps (one per snapshot), as the context diff and #step= links count them. */
import { describe, expect, it } from "vitest";
import type { WireEvent } from "../../../visualizer/protocol.js";
import { lastStepOfIteration, stepAt, stepsOf } from "../../../visualizer/page/src/steps.js";

const base = { runId: "r", sessionId: "x:0", rootId: "x:0", at: 0 };
const snap = (value: unknown, iteration: number, cause: string): WireEvent => ({ ...base, type: "@xstate.snapshot", event: { type: cause }, snapshot: { value, status: "active", context: { iteration } } });
const micro: WireEvent = { ...base, type: "@xstate.microstep", event: { type: "x" }, value: "inferring", transitions: [] };

describe("steps", () => {
  const events = [micro, snap("inferring", 0, "xstate.init"), micro, micro, snap({ compacting: "checking" }, 1, "llm.response"), snap("done", 1, "tool.result")];
  const steps = stepsOf(events);

  it("numbers the snapshots from 1 with the position that shows them", () => {
    expect(steps.map((s) => [s.n, s.pos, s.cause, s.leaves.join(), s.iteration])).toEqual([
      [1, 2, "xstate.init", "inferring", 0],
      [2, 5, "llm.response", "compacting.checking", 1],
      [3, 6, "tool.result", "done", 1],
    ]);
  });

  it("finds the step shown at a replay position, and the last step of an iteration", () => {
    expect([0, 1, 2, 4, 5, 6, 99].map((p) => stepAt(steps, p))).toEqual([0, 0, 1, 1, 2, 3, 3]);
    expect(lastStepOfIteration(steps, 1)?.n).toBe(3);
    expect(lastStepOfIteration(steps, 5)).toBeUndefined();
  });
});
