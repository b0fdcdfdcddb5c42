/**
 * Paired comparison of two configs on the same (scenario, run index) pairs: exact McNemar.
 *
 * Why McNemar: each pair shares a scenario and (on the simulator) a seed, so the two results
 * are not independent samples; only discordant pairs (one passed, the other failed) carry
 * information about the difference. Under "no difference" each discordant pair is a fair
 * coin, so the exact two-sided binomial test on them (= the sign test) is valid at any n,
 * unlike the chi-square approximation that needs ~25+ discordant pairs.
 */
export interface PairedComparison {
  pairs: number;
  /** A passed, B failed. */
  onlyA: number;
  /** B passed, A failed. */
  onlyB: number;
  bothPass: number;
  bothFail: number;
  /** Score difference A - B over the paired runs. */
  lift: number;
  pValue: number;
  significant: boolean;
}

function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/**
 * Exact two-sided McNemar p-value for discordant counts b and c.
 *
 * @example mcnemarExact(6, 0) // 0.03125
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/**
 * @example
 * comparePaired(new Map([["s|0", true]]), new Map([["s|0", false]])) // onlyA 1, pValue 1
 */
export function comparePaired(a: ReadonlyMap<string, boolean>, b: ReadonlyMap<string, boolean>, alpha = 0.05): PairedComparison {
  let onlyA = 0;
  let onlyB = 0;
  let bothPass = 0;
  let bothFail = 0;
  for (const [key, passA] of a) {
    const passB = b.get(key);
    if (passB === undefined) continue;
    if (passA && passB) bothPass++;
    else if (passA) onlyA++;
    else if (passB) onlyB++;
    else bothFail++;
  }
  const pairs = onlyA + onlyB + bothPass + bothFail;
  const pValue = mcnemarExact(onlyA, onlyB);
  return { pairs, onlyA, onlyB, bothPass, bothFail, lift: pairs === 0 ? 0 : (onlyA - onlyB) / pairs, pValue, significant: pValue < alpha };
}
