import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { budgetOption, isExhausted } from "../../src/guardrails/budget.js";
import { InvalidArgumentError } from "../../src/core/errors.js";

describe("isExhausted", () => {
  it("is exhausted only when the count exceeds the max", () => {
    expect(isExhausted(3, 3)).toBe(false);
    expect(isExhausted(4, 3)).toBe(true);
    expect(isExhausted(1, 0)).toBe(true);
    expect(isExhausted(0, 0)).toBe(false);
  });

  it("agrees with count > max (property)", () => {
    fc.assert(fc.property(fc.nat(100), fc.nat(100), (c, m) => isExhausted(c, m) === c > m));
  });
});

describe("budgetOption", () => {
  it("validates non-negative integers", () => {
    expect(budgetOption("x", undefined, 5)).toBe(5);
    expect(budgetOption("x", 0, 5)).toBe(0);
    expect(() => budgetOption("maxRetries", -1, 5)).toThrow(/maxRetries/);
    expect(() => budgetOption("x", 1.5, 5)).toThrow(InvalidArgumentError);
    expect(() => budgetOption("x", "3", 5)).toThrow(InvalidArgumentError);
  });
});
