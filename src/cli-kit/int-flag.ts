/**
 * Integer flags, checked one way for every command (the `forge-ts` commands, the eval CLIs and
 * the benches): the message names the flag and what it must be, and the value as given.
 */
import { InvalidArgumentError } from "../core/errors.js";

/**
 * `raw` as an integer from `min` to `max` (`fallback` when the flag is absent); an
 * InvalidArgumentError saying "--runs must be a positive integer, got -1" otherwise.
 *
 * @example intFlag("port", "8080", { min: 0, max: 65_535 }) // 8080
 */
export function intFlag(flag: string, raw: string | undefined, range: { min: number; max?: number }): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  const { min, max = Number.MAX_SAFE_INTEGER } = range;
  if (raw.trim() === "" || !Number.isSafeInteger(n) || n < min || n > max) {
    const what = max !== Number.MAX_SAFE_INTEGER ? `an integer from ${min} to ${max}` : min === 1 ? "a positive integer" : min === 0 ? "a non-negative integer" : `an integer >= ${min}`;
    throw new InvalidArgumentError(`--${flag}`, `must be ${what}, got ${raw}`);
  }
  return n;
}

/** A `--flag` that must be a positive integer (`fallback` when it is absent). */
export function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  return intFlag(flag, raw, { min: 1 }) ?? fallback;
}

/** A `--flag` that must be 0 or more (`fallback` when it is absent). */
export function nonNegativeInt(flag: string, raw: string | undefined, fallback: number): number {
  return intFlag(flag, raw, { min: 0 }) ?? fallback;
}
