/**
 * Minimal benchmark harness: each suite file exports `suite: BenchSuite`; eval/bench/run.ts
 * runs them all (or those named on the command line) and prints one table.
 */
export interface BenchRow {
  suite: string;
  case: string;
  value: number;
  unit: string;
  note?: string;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchRow[]>;
}

/**
 * Mean milliseconds per call of `fn`, after `warmup` calls, measured over at least
 * `minIterations` calls and `minMs` of wall clock (whichever takes longer).
 */
export async function measure(
  fn: () => unknown,
  options: { warmup?: number; minIterations?: number; minMs?: number } = {},
): Promise<number> {
  const { warmup = 3, minIterations = 5, minMs = 200 } = options;
  for (let i = 0; i < warmup; i++) await fn();
  let iterations = 0;
  const start = performance.now();
  let elapsed = 0;
  while (iterations < minIterations || elapsed < minMs) {
    await fn();
    iterations++;
    elapsed = performance.now() - start;
  }
  return elapsed / iterations;
}
