/** Wilson score interval for a binomial rate: honest at small n and at 0% / 100%. */
export interface RateInterval {
  rate: number;
  low: number;
  high: number;
}

/**
 * 95% (z = 1.96) Wilson interval for `successes` out of `trials`; 0 trials gives [0, 1].
 *
 * @example wilson(8, 10) // { rate: 0.8, low: 0.49, high: 0.94 } (rounded)
 */
export function wilson(successes: number, trials: number, z = 1.96): RateInterval {
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || trials < 0 || successes > trials) {
    throw new RangeError(`wilson: need integers 0 <= successes <= trials, got ${successes}/${trials}`);
  }
  if (trials === 0) return { rate: 0, low: 0, high: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const denom = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denom;
  return { rate: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
