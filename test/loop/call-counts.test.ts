/**
 * The loop-break count trie against the obvious model (a Map of key → count): same answers,
 * same entries, shape fixed by the key set, earlier tries untouched, JSON round trip.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addCallKeys,
  addCalls,
  callCount,
  callCountEntries,
  callCountsFrom,
  countsOf,
  EMPTY_CALL_COUNTS,
  LEAF_SIZE,
  type CallCountTrie,
} from "../../src/loop/call-counts.js";
import { callKey } from "../../src/guardrails/loop-break.js";

const FC = { seed: 20261123, numRuns: 200 };
// Few tools and small args: many repeats; up to 300 keys: several levels of branches.
const key = fc.tuple(fc.constantFrom("a", "b", "fetch", "__proto__", "constructor"), fc.integer({ min: 0, max: 120 })).map(([t, n]) => `${t}:{"n":${n}}`);
const keys = fc.array(key, { maxLength: 300 });

function model(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of list) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function depth(trie: CallCountTrie): number {
  return "slots" in trie ? 1 + Math.max(...Object.values(trie.slots).map(depth)) : 0;
}

describe("call count trie", () => {
  it("answers like a Map of counts, for present and absent keys", () => {
    fc.assert(
      fc.property(keys, fc.array(key, { maxLength: 20 }), (list, probes) => {
        const trie = addCallKeys(EMPTY_CALL_COUNTS, list);
        const m = model(list);
        for (const k of [...list, ...probes]) expect(callCount(trie, k)).toBe(m.get(k) ?? 0);
        expect(new Map(callCountEntries(trie))).toEqual(m);
        expect(countsOf(trie, probes)).toEqual(Object.fromEntries(probes.map((k) => [k, m.get(k) ?? 0])));
      }),
      FC,
    );
  });

  it("has a shape fixed by the keys and counts, whatever the insertion order", () => {
    fc.assert(
      fc.property(
        keys.chain((list) => fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }))),
        ([list, shuffled]) => {
          expect(addCallKeys(EMPTY_CALL_COUNTS, shuffled)).toEqual(addCallKeys(EMPTY_CALL_COUNTS, list));
          expect(callCountsFrom(model(list))).toEqual(addCallKeys(EMPTY_CALL_COUNTS, list));
        },
      ),
      FC,
    );
  });

  it("never changes a trie it was given (earlier snapshots keep their counts)", () => {
    fc.assert(
      fc.property(keys, keys, (first, more) => {
        const before = deepFreeze(addCallKeys(EMPTY_CALL_COUNTS, first));
        const copy = JSON.parse(JSON.stringify(before));
        const after = addCallKeys(before, more);
        expect(before).toEqual(copy);
        for (const k of more) expect(callCount(after, k)).toBe((model(first).get(k) ?? 0) + (model(more).get(k) ?? 0));
      }),
      FC,
    );
  });

  it("is plain JSON: a parsed copy answers the same", () => {
    fc.assert(
      fc.property(keys, (list) => {
        const trie = addCallKeys(EMPTY_CALL_COUNTS, list);
        const parsed = JSON.parse(JSON.stringify(trie)) as CallCountTrie;
        for (const k of list) expect(callCount(parsed, k)).toBe(callCount(trie, k));
      }),
      FC,
    );
  });

  it("splits leaves past LEAF_SIZE keys, so a lookup touches few nodes", () => {
    const many = Array.from({ length: 5000 }, (_, i) => `t:{"i":${i}}`);
    const trie = addCallKeys(EMPTY_CALL_COUNTS, many);
    expect("slots" in trie).toBe(true);
    expect(depth(trie)).toBeLessThanOrEqual(5); // 16^3 = 4096 < 5000 / LEAF_SIZE-ish buckets
    const leaves: number[] = [];
    const walk = (n: CallCountTrie): void => {
      if ("slots" in n) Object.values(n.slots).forEach(walk);
      else leaves.push(Object.keys(n.counts).length);
    };
    walk(trie);
    expect(Math.max(...leaves)).toBeLessThanOrEqual(LEAF_SIZE);
    expect(leaves.reduce((a, b) => a + b, 0)).toBe(5000);
  });

  it("counts calls by their canonical key (argument order does not matter)", () => {
    const trie = addCalls(EMPTY_CALL_COUNTS, [
      { tool: "search", args: { q: "x", page: 1 } },
      { tool: "search", args: { page: 1, q: "x" } },
    ]);
    expect(callCount(trie, callKey("search", { q: "x", page: 1 }))).toBe(2);
  });

  it("a rebuilt trie puts misplaced keys back where lookups find them", () => {
    const counts = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k:${i}`, i + 1]));
    // Every key under slot "0", as a hand edit might leave it: most lookups miss.
    const misplaced: CallCountTrie = { slots: { "0": { counts } } };
    const misses = Object.keys(counts).filter((k) => callCount(misplaced, k) !== counts[k]);
    expect(misses.length).toBeGreaterThan(0);
    const rebuilt = callCountsFrom(callCountEntries(misplaced));
    for (const [k, n] of Object.entries(counts)) expect(callCount(rebuilt, k)).toBe(n);
    expect(callCountsFrom([["z:1", 0]])).toEqual(EMPTY_CALL_COUNTS);
  });
});
