import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { budgetOption, ErrorTracker, isExhausted, nextToolErrors } from "../../src/guardrails/error-tracker.js";
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

describe("nextToolErrors", () => {
  it("resets on success, holds on soft errors, counts hard errors", () => {
    expect(nextToolErrors(2, true)).toBe(0);
    expect(nextToolErrors(2, false, true)).toBe(2);
    expect(nextToolErrors(2, false)).toBe(3);
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

describe("ErrorTracker", () => {
  it("defaults to 3 retries and 2 tool errors", () => {
    const t = new ErrorTracker();
    expect([t.maxRetries, t.maxToolErrors]).toEqual([3, 2]);
  });

  it("retries exhaust at exactly max+1 and reset", () => {
    const t = new ErrorTracker({ maxRetries: 2 });
    t.recordRetry();
    t.recordRetry();
    expect(t.retriesExhausted).toBe(false);
    t.recordRetry();
    expect(t.retries).toBe(3);
    expect(t.retriesExhausted).toBe(true);
    t.resetRetries();
    expect(t.retries).toBe(0);
    expect(t.retriesExhausted).toBe(false);
  });

  it("maxRetries 0 makes the first failure fatal", () => {
    const t = new ErrorTracker({ maxRetries: 0, maxToolErrors: 0 });
    t.recordRetry();
    t.recordResult(false);
    expect(t.retriesExhausted).toBe(true);
    expect(t.toolErrorsExhausted).toBe(true);
  });

  it("tool errors: soft errors are not counted, success resets", () => {
    const t = new ErrorTracker({ maxToolErrors: 1 });
    t.recordResult(false);
    t.recordResult(false, true);
    expect(t.toolErrors).toBe(1);
    expect(t.toolErrorsExhausted).toBe(false);
    t.recordResult(false);
    expect(t.toolErrorsExhausted).toBe(true);
    t.recordResult(true);
    expect(t.toolErrors).toBe(0);
    t.recordResult(false);
    t.resetErrors();
    expect(t.toolErrors).toBe(0);
  });

  it("rejects bad options", () => {
    expect(() => new ErrorTracker({ maxToolErrors: -2 })).toThrow(/maxToolErrors/);
  });
});
