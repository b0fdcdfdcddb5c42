/** The context diff between two steps. */
import { describe, expect, it } from "vitest";
import { diffContext } from "../../../visualizer/page/src/context-diff.js";

describe("diffContext", () => {
  it("lists changed, added and removed leaves with their paths", () => {
    const before = { iteration: 1, counters: { retries: 0 }, messages: [{ role: "user" }], validation: { kind: "calls" }, "odd key": 1 };
    const after = { iteration: 2, counters: { retries: 1 }, messages: [{ role: "user" }, { role: "assistant" }], terminal: true, "odd key": 2 };
    expect(diffContext(before, after).changes).toEqual([
      { path: "iteration", kind: "changed", before: 1, after: 2 },
      { path: "counters.retries", kind: "changed", before: 0, after: 1 },
      { path: "messages[1]", kind: "added", after: { role: "assistant" } },
      { path: "validation", kind: "removed", before: { kind: "calls" } },
      { path: '["odd key"]', kind: "changed", before: 1, after: 2 },
      { path: "terminal", kind: "added", after: true },
    ]);
  });

  it("finds nothing between equal JSON values", () => {
    const ctx = { a: [1, { b: null }], c: "x" };
    expect(diffContext(ctx, JSON.parse(JSON.stringify(ctx)))).toEqual({ changes: [], truncated: false });
  });

  it("reports a type change as one change, and the first step as all added", () => {
    expect(diffContext({ a: [1] }, { a: { 0: 1 } }).changes).toEqual([{ path: "a", kind: "changed", before: [1], after: { 0: 1 } }]);
    expect(diffContext({}, { a: 1, b: 2 }).changes.map((c) => c.kind)).toEqual(["added", "added"]);
  });

  it("stops at the limit and says so", () => {
    const after = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
    const d = diffContext({}, after, 4);
    expect(d.changes).toHaveLength(4);
    expect(d.truncated).toBe(true);
  });
});
