import { describe, expect, it } from "vitest";
import { MessageType, createMessage, MessageSchema } from "../../src/core/messages.js";
import fc from "fast-check";
import { isPlainObject, jsonIssue, MAX_JSON_DEPTH, tooDeepPath, walkJsonIssue } from "../../src/core/json-value.js";

describe("isPlainObject", () => {
  it("accepts objects, rejects arrays, null and primitives", () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const v of [[], [1], null, undefined, 0, "x", true]) expect(isPlainObject(v)).toBe(false);
  });
});

describe("jsonIssue and MessageSchema (hardening)", () => {
  it("property: the quick look never changes the answer of the careful walk", () => {
    const value = fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withObjectString: true, maxDepth: 6 });
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, depth) => {
        expect(jsonIssue(v)).toBe(walkJsonIssue(v));
        expect(jsonIssue(v, depth)).toBe(walkJsonIssue(v, depth));
      }),
      { numRuns: 3000 },
    );
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(jsonIssue(deep)).toBe(walkJsonIssue(deep));
    expect(jsonIssue(deep, 80)).toBe(walkJsonIssue(deep, 80));
  });

  it("accepts plain JSON and names the first non-JSON value by path", () => {
    expect(jsonIssue({ a: [1, "x", null, true, { b: undefined }] })).toBeUndefined();
    expect(jsonIssue({ a: [1, 2n] })).toBe("a bigint at a[1]");
    expect(jsonIssue({ f: () => 1 })).toBe("a function at f");
    expect(jsonIssue({ n: Number.NaN })).toBe("NaN at n (not a JSON number)");
    expect(jsonIssue({ d: new Date(0) })).toBe("a Date at d");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonIssue(cycle)).toMatch(/nesting deeper than 512 levels \(or a cycle\)/);
    const deep = JSON.parse("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1));
    expect(jsonIssue(deep)).toMatch(/nesting deeper/);
    expect(jsonIssue(JSON.parse("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH)))).toBeUndefined();
    expect(jsonIssue(JSON.parse("[".repeat(100_000) + "]".repeat(100_000)))).toMatch(/nesting deeper/);
    const getter = Object.defineProperty({}, "x", { enumerable: true, get: () => { throw new Error("nope"); } });
    expect(jsonIssue(getter)).toMatch(/unreadable property/);
  });

  it("MessageSchema accepts createMessage output and refuses wrong types", () => {
    expect(MessageSchema.safeParse(createMessage("tool", "r", MessageType.TOOL_RESULT, { toolName: "t", toolCallId: "c", stepIndex: 1 })).success).toBe(true);
    for (const bad of [5, null, { role: "user", content: 5, meta: { type: "user_input" } }, { role: "user", content: "x", meta: { type: "nope" } }]) {
      expect(MessageSchema.safeParse(bad).success).toBe(false);
    }
  });
});

describe("tooDeepPath", () => {
  it("names the first container past the bound, in document order, and nothing within it", () => {
    expect(tooDeepPath({ a: [1, 2], b: { c: [[]] } }, 3)).toBe("b.c[0]");
    expect(tooDeepPath({ a: [[[]]], b: [[[]]] }, 3)).toBe("a[0][0]");
    expect(tooDeepPath({ a: [1, 2], b: { c: [[]] } }, 4)).toBeUndefined();
    expect(tooDeepPath("x", 0)).toBeUndefined();
    expect(tooDeepPath([], 0)).toBe("(root)");
  });

  it("agrees with jsonIssue's depth limit, and cuts long paths after shownKeys segments", () => {
    const at = (n: number) => JSON.parse("[".repeat(n) + "]".repeat(n)) as unknown;
    expect(tooDeepPath(at(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBeUndefined();
    expect(tooDeepPath(at(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBeDefined();
    expect(tooDeepPath(at(100_000), 64, 3)).toBe("[0][0][0]…");
    expect(tooDeepPath({ messages: [{ input: at(100) }] }, 64, 4)).toBe("messages[0].input[0]…");
  });
});
