import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyJson, diffJson } from "../../src/persistence/json-delta.js";

/** An edit made the way XState assigns context: a changed path is copied, everything else is shared. */
type Edit = { path: string[]; op: "set" | "push" | "delete" | "replaceArray"; value: unknown };

function edit(value: unknown, e: Edit, depth = 0): unknown {
  if (depth === e.path.length || typeof value !== "object" || value === null) {
    if (e.op === "push" && Array.isArray(value)) return [...value, e.value];
    if (e.op === "replaceArray" && Array.isArray(value)) return [e.value, ...value.slice(1)];
    return e.value;
  }
  const key = e.path[depth]!;
  if (Array.isArray(value)) {
    const i = Number(key) % Math.max(1, value.length);
    if (value.length === 0) return e.op === "push" ? [e.value] : value;
    const copy = [...value];
    copy[i] = edit(value[i], e, depth + 1);
    return copy;
  }
  const obj = value as Record<string, unknown>;
  if (depth === e.path.length - 1 && e.op === "delete") {
    const { [key]: _gone, ...rest } = obj;
    return rest;
  }
  return { ...obj, [key]: edit(obj[key], e, depth + 1) };
}

const json = fc.jsonValue({ maxDepth: 4 });
const editArb = fc.record({
  path: fc.array(fc.constantFrom("a", "b", "messages", "0", "1", "x"), { maxLength: 4 }),
  op: fc.constantFrom<Edit["op"]>("set", "push", "delete", "replaceArray"),
  value: json,
});
const roundTrip = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

describe("diffJson / applyJson", () => {
  it("applying the diff of any immutable edit sequence gives the new value, in place or not", () => {
    fc.assert(
      fc.property(json, fc.array(editArb, { maxLength: 8 }), (start, edits) => {
        let prev: unknown = start;
        for (const e of edits) {
          const next = edit(prev, e);
          const delta = diffJson(prev, next);
          const expected = roundTrip(next ?? null);
          if (delta === undefined) expect(roundTrip(prev ?? null)).toEqual(expected);
          else {
            expect(roundTrip(applyJson(prev, delta) ?? null)).toEqual(expected);
            // Stores apply deltas to a freshly parsed copy in place: the same result.
            expect(roundTrip(applyJson(roundTrip(prev), roundTrip(delta) as never, { inPlace: true }) ?? null)).toEqual(expected);
          }
          prev = next;
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("is correct without shared identity too (equal copies are written again, not lost)", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const delta = diffJson(a, roundTrip(b));
        expect(roundTrip((delta === undefined ? a : applyJson(roundTrip(a), delta)) ?? null)).toEqual(roundTrip(b ?? null));
      }),
      { numRuns: 1_000 },
    );
  });

  it("an append to a long shared array costs only the new items; unchanged is undefined", () => {
    const messages = Array.from({ length: 1_000 }, (_, i) => ({ role: "user", content: `m${i}` }));
    const prev = { context: { messages, iteration: 1, steps: { done: ["a"] } }, value: "inferring" };
    const next = { ...prev, context: { ...prev.context, messages: [...messages, { role: "assistant", content: "new" }], iteration: 2 } };
    expect(diffJson(prev, next)).toEqual({ o: { context: { o: { messages: { a: [{ role: "assistant", content: "new" }] }, iteration: { v: 2 } } } } });
    expect(diffJson(prev, { ...prev })).toBeUndefined();
    expect(diffJson({ a: 1, b: undefined }, { a: 1 })).toBeUndefined();
    expect(diffJson({ a: 1, b: 2 }, { a: 1 })).toEqual({ d: ["b"] });
  });
});
