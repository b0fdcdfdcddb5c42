/**
 * A tiny seeded PRNG (mulberry32) and a string hash (FNV-1a) for the simulated model.
 * Math.random is never used: every simulated decision must replay exactly for a seed.
 */

/** Deterministic random source; every method advances the same 32-bit state. */
export interface Prng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n); `n` must be a positive integer. */
  int(n: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** true with probability `p`. */
  chance(p: number): boolean;
}

/**
 * mulberry32: 32-bit state, full period, good enough statistics for fault injection.
 *
 * @example
 * const rng = createPrng(42);
 * rng.next(); // 0 <= x < 1, the same on every run for seed 42
 */
export function createPrng(seed: number): Prng {
  if (!Number.isFinite(seed)) throw new RangeError(`PRNG seed must be a finite number, got ${seed}`);
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`Prng.int needs a positive integer, got ${n}`);
    return Math.floor(next() * n);
  };
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError("Prng.pick needs a non-empty array");
      return items[int(items.length)] as T;
    },
    chance: (p) => next() < p,
  };
}

/**
 * FNV-1a over the UTF-16 code units of `text`, mixed with `seed`: a 32-bit unsigned hash.
 * Used to derive one PRNG per request from (seed, conversation) so a request always gets
 * the same answer, whatever happened before it in the process.
 *
 * @example
 * hashString("hello", 7) === hashString("hello", 7); // true
 */
export function hashString(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // Final avalanche so nearby seeds give unrelated streams.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  return h >>> 0;
}
