import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPrng, hashString } from "../../src/clients/prng.js";

describe("createPrng", () => {
  it("replays the same sequence for a seed and stays in range", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 1000 }), (seed, n) => {
        const a = createPrng(seed);
        const b = createPrng(seed);
        for (let i = 0; i < 20; i++) {
          const x = a.next();
          expect(x).toBe(b.next());
          expect(x).toBeGreaterThanOrEqual(0);
          expect(x).toBeLessThan(1);
          const k = a.int(n);
          expect(k).toBe(b.int(n));
          expect(Number.isInteger(k) && k >= 0 && k < n).toBe(true);
        }
      }),
    );
  });

  it("is roughly uniform (chi-square over 10 buckets, fixed seed)", () => {
    const rng = createPrng(12345);
    const counts = Array.from({ length: 10 }, () => 0);
    const n = 20_000;
    for (let i = 0; i < n; i++) counts[rng.int(10)]!++;
    const chi = counts.reduce((s, c) => s + (c - n / 10) ** 2 / (n / 10), 0);
    expect(chi).toBeLessThan(27.9); // p = 0.001 for 9 degrees of freedom
  });

  it("rejects bad arguments loudly", () => {
    expect(() => createPrng(Number.NaN)).toThrow(RangeError);
    expect(() => createPrng(1).int(0)).toThrow(RangeError);
    expect(() => createPrng(1).pick([])).toThrow(RangeError);
  });
});

describe("hashString", () => {
  it("is deterministic and depends on both text and seed", () => {
    expect(hashString("abc", 1)).toBe(hashString("abc", 1));
    expect(hashString("abc", 1)).not.toBe(hashString("abc", 2));
    expect(hashString("abc", 1)).not.toBe(hashString("abd", 1));
    fc.assert(fc.property(fc.string(), fc.integer(), (s, seed) => Number.isInteger(hashString(s, seed)) && hashString(s, seed) >= 0));
  });
});
