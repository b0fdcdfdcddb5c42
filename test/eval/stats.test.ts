import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { wilson } from "../../eval/wilson.js";
import { comparePaired, mcnemarExact } from "../../eval/paired.js";

describe("wilson", () => {
  it("matches known 95% intervals", () => {
    const w = wilson(8, 10);
    expect(w.rate).toBe(0.8);
    expect(w.low).toBeCloseTo(0.4902, 3);
    expect(w.high).toBeCloseTo(0.9433, 3);
    const zero = wilson(0, 10);
    expect(zero.low).toBe(0);
    expect(zero.high).toBeCloseTo(0.2775, 3);
    expect(wilson(0, 0)).toEqual({ rate: 0, low: 0, high: 1 });
  });

  it("brackets the rate inside [0, 1] and narrows with n", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
        const k = Math.floor(f * n);
        const w = wilson(k, n);
        expect(w.low).toBeGreaterThanOrEqual(0);
        expect(w.high).toBeLessThanOrEqual(1);
        expect(w.low).toBeLessThanOrEqual(w.rate + 1e-12);
        expect(w.high).toBeGreaterThanOrEqual(w.rate - 1e-12);
        const w4 = wilson(k * 4, n * 4);
        expect(w4.high - w4.low).toBeLessThan(w.high - w.low + 1e-12);
      }),
    );
  });

  it("rejects impossible counts", () => {
    expect(() => wilson(3, 2)).toThrow(RangeError);
    expect(() => wilson(-1, 2)).toThrow(RangeError);
  });
});

describe("exact McNemar", () => {
  it("matches the binomial sign test", () => {
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(6, 0)).toBeCloseTo(2 / 64, 10);
    expect(mcnemarExact(1, 5)).toBeCloseTo((2 * (1 + 6)) / 64, 10);
    expect(mcnemarExact(5, 5)).toBe(1);
  });

  it("is symmetric and in (0, 1]", () => {
    fc.assert(
      fc.property(fc.nat(200), fc.nat(200), (b, c) => {
        const p = mcnemarExact(b, c);
        expect(p).toBeCloseTo(mcnemarExact(c, b), 12);
        expect(p).toBeGreaterThan(0);
        expect(p).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("pairs only keys present in both configs", () => {
    const a = new Map([["s|0", true], ["s|1", true], ["s|2", false], ["t|0", true]]);
    const b = new Map([["s|0", true], ["s|1", false], ["s|2", true], ["u|0", false]]);
    const c = comparePaired(a, b);
    expect(c).toMatchObject({ pairs: 3, bothPass: 1, onlyA: 1, onlyB: 1, bothFail: 0, lift: 0, pValue: 1, significant: false });
    const strong = comparePaired(new Map(Array.from({ length: 20 }, (_, i) => [`k|${i}`, true])), new Map(Array.from({ length: 20 }, (_, i) => [`k|${i}`, i < 5])));
    expect(strong.onlyA).toBe(15);
    expect(strong.significant).toBe(true);
  });
});
