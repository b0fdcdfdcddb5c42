/**
 * Aggregate metrics from run records: per (config, scenario) and per config, with Wilson
 * intervals on the rates, plus a paired reforged-vs-bare style comparison.
 */
import { comparePaired, type PairedComparison } from "./paired.js";
import type { RunRecord } from "./run-record.js";
import { wilson, type RateInterval } from "./wilson.js";

export interface Metrics {
  runs: number;
  completed: number;
  correct: number;
  /** correct / runs — the primary sort key. */
  score: RateInterval;
  /** correct / completed. */
  accuracy: RateInterval;
  /** completed / runs. */
  completeness: RateInterval;
  /** Mean of min(1, ideal / iterations) over completed runs (1 = ideal path). */
  efficiency: number;
  /** Mean extra LLM calls beyond the ideal, over all runs. */
  wastedCalls: number;
  /** Mean seconds per run. */
  avgSeconds: number;
  avgIterations: number;
  compactionRuns: number;
  maxPhase: number;
}

export interface ConfigMetrics extends Metrics {
  config: string;
  backend: string;
  model: string;
  ablation: string;
  scenarios: Record<string, Metrics>;
}

const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** @example computeMetrics(records).score.rate */
export function computeMetrics(records: readonly RunRecord[]): Metrics {
  const runs = records.length;
  const done = records.filter((r) => r.completed);
  const correct = records.filter((r) => r.correct).length;
  return {
    runs,
    completed: done.length,
    correct,
    score: wilson(correct, runs),
    accuracy: wilson(done.filter((r) => r.correct).length, done.length),
    completeness: wilson(done.length, runs),
    efficiency: mean(done.map((r) => Math.min(1, r.idealIterations / Math.max(1, r.iterations)))),
    wastedCalls: mean(records.map((r) => r.wastedCalls)),
    avgSeconds: mean(records.map((r) => r.elapsedMs / 1000)),
    avgIterations: mean(records.map((r) => r.iterations)),
    compactionRuns: records.filter((r) => r.compactions > 0).length,
    maxPhase: Math.max(0, ...records.flatMap((r) => r.compactionPhases)),
  };
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = out.get(k);
    if (list) list.push(x);
    else out.set(k, [x]);
  }
  return out;
}

/**
 * Per-config metrics (with per-scenario breakdown), sorted by score, best first.
 *
 * @example metricsByConfig(readRecords("eval_results.jsonl"))[0]?.config
 */
export function metricsByConfig(records: readonly RunRecord[]): ConfigMetrics[] {
  const out: ConfigMetrics[] = [];
  for (const [config, rs] of groupBy(records, (r) => r.config)) {
    const first = rs[0]!;
    const scenarios: Record<string, Metrics> = {};
    for (const [name, srs] of groupBy(rs, (r) => r.scenario)) scenarios[name] = computeMetrics(srs);
    out.push({ config, backend: first.backend, model: first.model, ablation: first.ablation, ...computeMetrics(rs), scenarios });
  }
  return out.sort((a, b) => b.score.rate - a.score.rate || a.config.localeCompare(b.config));
}

/** Pass/fail per `${scenario}|${runIndex}` for one config: the pairing unit of comparisons. */
export function passMap(records: readonly RunRecord[], config: string): Map<string, boolean> {
  return new Map(records.filter((r) => r.config === config).map((r) => [`${r.scenario}|${r.runIndex}`, r.correct]));
}

/** @example compareConfigs(records, "sim:small-model@reforged", "sim:small-model@bare").significant */
export function compareConfigs(records: readonly RunRecord[], configA: string, configB: string): PairedComparison {
  return comparePaired(passMap(records, configA), passMap(records, configB));
}

/** Per-scenario score lift of A over B (A - B), for the lift chart. */
export function liftByScenario(records: readonly RunRecord[], configA: string, configB: string): { scenario: string; a: number; b: number; lift: number }[] {
  const a = metricsByConfig(records.filter((r) => r.config === configA))[0]?.scenarios ?? {};
  const b = metricsByConfig(records.filter((r) => r.config === configB))[0]?.scenarios ?? {};
  return Object.keys(a)
    .filter((s) => b[s] !== undefined)
    .map((s) => ({ scenario: s, a: a[s]!.score.rate, b: b[s]!.score.rate, lift: a[s]!.score.rate - b[s]!.score.rate }));
}
