/**
 * The targets the Benchmarks table (docs/benchmarks.md) states, as data `npm run bench -- --check` compares
 * each run against (exit 1 when one is missed). One entry per stated target; a row it names
 * that the run did not make (a suite not run, FORGE_BENCH_KILLS=0) is not checked.
 */
import type { BenchRow } from "./harness.js";

export interface BenchTarget {
  suite: string;
  /** The rows this target applies to (every matching row must meet it). */
  case: RegExp;
  /** The README's target cell. */
  text: string;
  /** Upper bound, or one computed from the run's other rows (the durability floor). */
  max?: number | ((rows: readonly BenchRow[]) => number);
  /** Lower bound. */
  min?: number;
  /** A row's figure to compare instead of its value (the load row's error count). */
  figure?: (row: BenchRow) => number;
}

const floorTimes = (k: number) => (rows: readonly BenchRow[]) => k * (rows.find((r) => r.case === "floor: one 1 KB append + fsync")?.value ?? Number.NaN);
const zero = (suite: string, caseRe: RegExp): BenchTarget => ({ suite, case: caseRe, text: "0", max: 0 });

export const BENCH_TARGETS: readonly BenchTarget[] = [
  { suite: "compaction", case: /^TieredCompact 2,000 msgs$/, text: "2,000 msgs ≤ 2 ms", max: 2 },
  // "guarded", "unguarded", the fleet and structured output; not the floor (a bare hop has no target).
  { suite: "proxy", case: /^added latency p50, (?!minimal pass-through)/, text: "p50 ≤ 1 ms", max: 1 },
  { suite: "proxy", case: /concurrent streaming clients/, text: "0 errors", max: 0, figure: (r) => r.extra?.errors ?? Number.NaN },
  // Large tool sets (issue 46: a 1,000-tool request held the event loop for seconds): no request holds it long.
  { suite: "proxy", case: /^[\d,]+ tools(, repeated| never seen before): event-loop delay p99$/, text: "delay max ≤ 500 ms", max: 500, figure: (r) => r.extra?.max ?? Number.NaN },
  { suite: "proxy", case: /^time to first content token p50, guarded stream$/, text: "p50 ≤ direct + 5 ms", max: 5, figure: (r) => r.value - (r.extra?.direct ?? Number.NaN) },
  // The proxy at scale (proxy-scale.ts): the CLI proxy in its own process; the ratios are to the pass-through's figure in the same run.
  { suite: "proxy-scale", case: /^first request of .+: added latency p50$/, text: "p50 ≤ 2 ms", max: 2 },
  { suite: "proxy-scale", case: /^[\d,]+ streams × \d+ deltas at \d+\/s: errors$/, text: "0 errors", max: 0 },
  { suite: "proxy-scale", case: /^[\d,]+ streams × \d+ deltas at 20\/s: time to first token p99, proxy \/ pass-through$/, text: "TTFT p99 ≤ 2× pass-through", max: 2 },
  { suite: "proxy-scale", case: /^[\d,]+ streams × \d+ deltas at 20\/s: peak RSS, proxy \/ pass-through$/, text: "peak RSS ≤ 2× pass-through", max: 2 },
  { suite: "proxy-scale", case: /^[\d,]+ streams × \d+ deltas at 100\/s: CPU per delta, proxy \/ pass-through$/, text: "CPU per delta ≤ 1.5× pass-through", max: 1.5 },
  { suite: "proxy-scale", case: /^[\d,]+ streams × \d+ deltas at \d+\/s: event-loop delay p99 \(\/metrics\)$/, text: "p99 ≤ 50 ms", max: 50 },
  { suite: "rescue", case: /^1 MB adversarial: /, text: "well under 1 s", max: 1000 },
  // The loop to beat is AI SDK 7's (its rows need Node >= 22; on Node 20 they are left out, and so are these checks).
  { suite: "runner", case: /^ratio forge reused\/ai-sdk7 N=10$/, text: "≤ 0.8", max: 0.8 },
  { suite: "runner", case: /^ratio forge reused\/ai-sdk7 N=100$/, text: "≤ 0.5", max: 0.5 },
  { suite: "runner", case: /^ratio forge reused\/ai-sdk7 N=1000$/, text: "≤ 0.2", max: 0.2 },
  { suite: "runner", case: /^flatness( reused)? N=\d+\/N=\d+$/, text: "≤ 1.5×", max: 1.5 },
  { suite: "snapshot", case: /^persist \+ restore$/, text: "≤ 5 ms", max: 5 },
  { suite: "durability", case: /: commit, mean \/ median, N = \d+$/, text: "≤ 2× floor", max: floorTimes(2) },
  zero("durability", /: (finished tools re-executed|recorded tools re-executed|torn or corrupt checkpoints|event logs unreadable after the run|hangs|wrong results)$/),
  zero("chaos", /: (wrong outcomes|lost|run twice|recorded tools re-run|session order violations|jammed sessions|worker crashes)$/),
  zero("partitions", /: (wrong outcomes|lost|recorded tools re-run|double holders|tool starts past the lease while cut off|late holders not told FORGE_LOCK_LOST|leases taken from a live holder|session order violations|jammed sessions|workers not recovered)$/),
];

export interface MissedTarget {
  row: BenchRow;
  target: BenchTarget;
  figure: number;
}

/**
 * Every row that misses a target (a figure that is not a number misses too: a target cannot be
 * shown met by NaN).
 *
 * @example missedTargets(rows).map((m) => `${m.row.case}: ${m.figure} (target ${m.target.text})`)
 */
export function missedTargets(rows: readonly BenchRow[], targets: readonly BenchTarget[] = BENCH_TARGETS): MissedTarget[] {
  const missed: MissedTarget[] = [];
  for (const target of targets) {
    const max = typeof target.max === "function" ? target.max(rows) : target.max;
    for (const row of rows) {
      if (row.suite !== target.suite || !target.case.test(row.case)) continue;
      const figure = target.figure ? target.figure(row) : row.value;
      const ok = Number.isFinite(figure) && (max === undefined || figure <= max) && (target.min === undefined || figure >= target.min);
      if (!ok) missed.push({ row, target, figure });
    }
  }
  return missed;
}

/** How many rows a target set checks in this run: `--check` with none checked says so. */
export function checkedRows(rows: readonly BenchRow[], targets: readonly BenchTarget[] = BENCH_TARGETS): number {
  return rows.filter((r) => targets.some((t) => t.suite === r.suite && t.case.test(r.case))).length;
}
