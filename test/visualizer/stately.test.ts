import { describe, expect, it } from "vitest";
import type { WireEvent } from "../../visualizer/protocol.js";
import { forwardToStately, type StatelyInspectorLike } from "../../visualizer/stately.js";

describe("forwardToStately", () => {
  it("hands Stately's manual inspector the actors, events and snapshots, named per run", () => {
    const calls: unknown[][] = [];
    const inspector: StatelyInspectorLike = {
      actor: (...args) => void calls.push(["actor", ...args]),
      event: (...args) => void calls.push(["event", ...args]),
      snapshot: (...args) => void calls.push(["snapshot", ...args]),
    };
    const base = { runId: "r1", rootId: "x:0", at: 1 };
    const events: WireEvent[] = [
      { ...base, sessionId: "x:0", type: "@xstate.actor", src: "workflow" },
      { ...base, sessionId: "x:1", type: "@xstate.actor", src: "infer", parentId: "x:0" },
      { ...base, sessionId: "x:0", type: "@xstate.event", sourceId: "x:1", event: { type: "xstate.done.actor.infer" } },
      { ...base, sessionId: "x:0", type: "@xstate.microstep", event: { type: "e" }, value: "validating", transitions: [] },
      { ...base, sessionId: "x:0", type: "@xstate.snapshot", event: { type: "e" }, snapshot: { value: "validating", status: "active", context: { iteration: 1 } } },
      { ...base, sessionId: "x:0", type: "forge.chunk", chunk: { type: "text_delta", content: "hi" } },
    ];
    forwardToStately(inspector, '{"id":"workflow"}')(events);
    expect(calls).toEqual([
      ["actor", "r1/x:0", { status: "active" }, { rootId: "r1/x:0", definition: '{"id":"workflow"}' }],
      ["actor", "r1/x:1", { status: "active" }, { rootId: "r1/x:0", parentId: "r1/x:0" }],
      ["event", "r1/x:0", { type: "xstate.done.actor.infer" }, { source: "r1/x:1" }],
      ["snapshot", "r1/x:0", { status: "active", value: "validating", context: { iteration: 1 } }, { event: { type: "e" } }],
    ]);
  });
});
