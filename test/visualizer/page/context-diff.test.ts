/** The context diff between two steps. */
import { describe, expect, it } from "vitest";
import { clockTime, diffContext, displayValue, lastKey } from "../../../visualizer/page/src/context-diff.js";

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

  it("names a key that is no identifier in quotes, unescaped", () => {
    expect(diffContext({ counts: {} }, { counts: { 'refund:{"order":"A1"}': 1 } }).changes.map((c) => c.path)).toEqual(['counts["refund:{"order":"A1"}"]']);
  });
});

describe("displayValue", () => {
  const at = Date.UTC(2026, 0, 2, 3, 4, 5, 67);

  it("prints times (now, at, …At in epoch ms) as clock times with milliseconds, in the page's time zone", () => {
    const d = new Date(at);
    const pad = (n: number, w = 2) => String(n).padStart(w, "0");
    expect(clockTime(at)).toBe(`${pad(d.getHours())}:${pad(d.getMinutes())}:05.067`);
    expect(displayValue(at, "now")).toBe(clockTime(at));
    expect(displayValue({ startedAt: at, run: { askedAt: at, at } }, "run")).toBe(JSON.stringify({ startedAt: clockTime(at), run: { askedAt: clockTime(at), at: clockTime(at) } }));
  });

  it("leaves numbers that are no times alone: other keys, and counts under a time-like key", () => {
    expect(displayValue(at, "historyTokens")).toBe(String(at));
    expect(displayValue(4096, "compactAt")).toBe("4096");
    expect(displayValue(null, "now")).toBe("null");
  });

  it("prints JSON held in strings as JSON, not as an escaped string", () => {
    const message = { role: "tool", content: JSON.stringify({ total: 85, lines: [{ part: "PN-1" }] }) };
    expect(displayValue(message)).toBe('{"role":"tool","content":{"total":85,"lines":[{"part":"PN-1"}]}}');
    expect(displayValue(message.content)).toBe('{"total":85,"lines":[{"part":"PN-1"}]}');
    // Text that only starts like JSON, and plain text, stay as they are.
    expect(displayValue({ content: "{not json" })).toBe('{"content":"{not json"}');
    expect(displayValue("refunded 500 on A1")).toBe("refunded 500 on A1");
  });

  it("finds the key a path ends in", () => {
    expect(["now", "run.startedAt", "messages[3]", 'counts["a b"]', "steps.completed[2].tool"].map(lastKey)).toEqual(["now", "startedAt", "", "", "tool"]);
  });
});
