/**
 * Minimal benchmark harness: each suite file exports `suite: BenchSuite`; eval/bench/run.ts
 * runs them all (or those named on the command line) and prints one table, and with
 * `--readme` the Benchmarks rows (docs/benchmarks.md) made from the same figures (pasted, never retyped).
 */
export interface BenchRow {
  suite: string;
  case: string;
  value: number;
  unit: string;
  note?: string;
  /** Further figures of the same measurement that the README row shows (p99, error count, ...). */
  extra?: Record<string, number>;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchRow[]>;
  /** README table rows (`| suite | case | result | target |`) from this suite's rows. */
  readme(rows: BenchRow[]): string[];
}

/** The row of `rows` with this case (and unit); a missing one is a bug in the suite, so it throws. */
export function row(rows: readonly BenchRow[], caseName: string, unit?: string): BenchRow {
  const found = rows.find((r) => r.case === caseName && (unit === undefined || r.unit === unit));
  if (!found) throw new Error(`bench row "${caseName}"${unit ? ` (${unit})` : ""} is missing`);
  return found;
}

/** A figure as the README prints it: three significant digits, thousands separated. */
export function fig(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return Number(Math.round(value).toPrecision(Math.max(3, String(Math.round(Math.abs(value))).length - 2))).toLocaleString("en");
  return Number(value.toPrecision(value >= 1 ? 3 : 2)).toString();
}

/** One README table row. */
export const mdRow = (...cells: string[]): string => `| ${cells.join(" | ")} |`;

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
