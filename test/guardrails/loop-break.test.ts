import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callKey, countCalls, DEFAULT_MAX_TOOL_REPEAT, findRepeatViolations, isRepeatExceeded } from "../../src/guardrails/loop-break.js";
import { jsonValue } from "../support/arbitraries.js";

describe("callKey", () => {
  it("is canonical: key order does not matter, values and tool do", () => {
    expect(callKey("s", { a: 1, b: { c: 2, d: 3 } })).toBe(callKey("s", { b: { d: 3, c: 2 }, a: 1 }));
    expect(callKey("s", { a: 1 })).not.toBe(callKey("s", { a: 2 }));
    expect(callKey("s", { a: 1 })).not.toBe(callKey("t", { a: 1 }));
  });

  it("is invariant under key order (property)", () => {
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), jsonValue()), fc.integer(), (tool, args, seed) => {
        const keys = Object.keys(args);
        const shuffled = [...keys].sort((x, y) => ((x.length * 31 + seed) % 7) - ((y.length * 31 + seed) % 7) || (x < y ? 1 : -1));
        const permuted = Object.fromEntries(shuffled.map((k) => [k, args[k]]));
        expect(callKey(tool, permuted)).toBe(callKey(tool, args));
      }),
    );
  });
});

describe("isRepeatExceeded", () => {
  it("is true once the call already ran max times", () => {
    const k = callKey("s", {});
    expect(DEFAULT_MAX_TOOL_REPEAT).toBe(3);
    expect(isRepeatExceeded({}, k, 3)).toBe(false);
    expect(isRepeatExceeded({ [k]: 2 }, k, 3)).toBe(false);
    expect(isRepeatExceeded({ [k]: 3 }, k, 3)).toBe(true);
    expect(isRepeatExceeded({}, k, 0)).toBe(true);
  });
});

describe("findRepeatViolations / countCalls", () => {
  it("counts identical calls earlier in the same batch", () => {
    const k = callKey("s", { q: 1 });
    const calls = [
      { tool: "s", args: { q: 1 } },
      { tool: "t", args: {} },
      { tool: "s", args: { q: 1 } },
    ];
    expect(findRepeatViolations(calls, { [k]: 2 }, 3)).toEqual([{ index: 2, tool: "s", count: 3 }]);
    expect(findRepeatViolations(calls, {}, 3)).toEqual([]);
  });

  it("countCalls adds one per executed call without mutating its input", () => {
    const before = { [callKey("s", {})]: 1 };
    const after = countCalls(before, [
      { tool: "s", args: {} },
      { tool: "t", args: { b: 1, a: 2 } },
    ]);
    expect(before).toEqual({ [callKey("s", {})]: 1 });
    expect(after).toEqual({ [callKey("s", {})]: 2, [callKey("t", { a: 2, b: 1 })]: 1 });
  });

  it("an identical call runs at most max times over any sequence of batches (property)", () => {
    fc.assert(
      fc.property(fc.nat(4), fc.array(fc.array(fc.constantFrom("a", "b"), { maxLength: 4 }), { maxLength: 8 }), (max, batches) => {
        let counts: Record<string, number> = {};
        for (const batch of batches) {
          const calls = batch.map((tool) => ({ tool, args: {} }));
          const blocked = new Set(findRepeatViolations(calls, counts, max).map((v) => v.index));
          counts = countCalls(counts, calls.filter((_, i) => !blocked.has(i)));
        }
        for (const n of Object.values(counts)) expect(n).toBeLessThanOrEqual(max);
      }),
    );
  });
});
