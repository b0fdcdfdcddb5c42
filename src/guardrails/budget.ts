/**
 * Budgets (retries, tool errors, premature terminals, prerequisite violations): when a counter
 * has run out, and what a budget option may be.
 */
import { InvalidArgumentError } from "../core/errors.js";

/**
 * A budget is exhausted when its counter EXCEEDS the max, so `max = 0` makes the first failure fatal.
 *
 * @example
 * isExhausted(3, 3); // false
 * isExhausted(4, 3); // true
 */
export function isExhausted(count: number, max: number): boolean {
  return count > max;
}

/** Throws InvalidArgumentError unless `value` is a non-negative integer (undefined → `fallback`). */
export function budgetOption(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, `must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}
