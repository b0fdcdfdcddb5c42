/**
 * Consecutive-failure budgets: retries (responses with no usable call) and tool errors.
 * The pure functions are what the workflow machine uses on its JSON counters; the class is
 * the stateful wrapper for foreign loops.
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

/**
 * The tool-error counter after one batch: success resets it, a soft error (ToolResolutionError)
 * leaves it unchanged, any other failure adds one.
 *
 * @example
 * nextToolErrors(1, false); // 2
 * nextToolErrors(1, true);  // 0
 */
export function nextToolErrors(count: number, success: boolean, isSoftError = false): number {
  if (success) return 0;
  return isSoftError ? count : count + 1;
}

/** Throws InvalidArgumentError unless `value` is a non-negative integer (undefined → `fallback`). */
export function budgetOption(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, `must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

export interface ErrorTrackerOptions {
  /** Consecutive responses without a usable call before exhaustion. Default 3. */
  maxRetries?: number;
  /** Consecutive failed batches before exhaustion. Default 2. */
  maxToolErrors?: number;
}

/**
 * @example
 * const tracker = new ErrorTracker({ maxRetries: 1 });
 * tracker.recordRetry(); tracker.retriesExhausted; // false
 * tracker.recordRetry(); tracker.retriesExhausted; // true
 */
export class ErrorTracker {
  readonly maxRetries: number;
  readonly maxToolErrors: number;
  #retries = 0;
  #toolErrors = 0;

  constructor(options: ErrorTrackerOptions = {}) {
    this.maxRetries = budgetOption("maxRetries", options.maxRetries, 3);
    this.maxToolErrors = budgetOption("maxToolErrors", options.maxToolErrors, 2);
  }

  recordRetry(): void {
    this.#retries += 1;
  }

  resetRetries(): void {
    this.#retries = 0;
  }

  recordResult(success: boolean, isSoftError = false): void {
    this.#toolErrors = nextToolErrors(this.#toolErrors, success, isSoftError);
  }

  resetErrors(): void {
    this.#toolErrors = 0;
  }

  get retries(): number {
    return this.#retries;
  }

  get toolErrors(): number {
    return this.#toolErrors;
  }

  get retriesExhausted(): boolean {
    return isExhausted(this.#retries, this.maxRetries);
  }

  get toolErrorsExhausted(): boolean {
    return isExhausted(this.#toolErrors, this.maxToolErrors);
  }
}
