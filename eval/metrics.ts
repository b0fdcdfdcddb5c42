/**
 * Aggregate metrics from run records, defined as forge defines them so a report stands beside
 * its leaderboard: per (config, scenario) and per config, Wilson intervals on the rates, and a
 * paired reforged-vs-bare comparison (exact McNemar).
 *
 * The outcome of a run, in forge's vocabulary: every record is an attempted run; it completed
 * when the workflow reached its terminal tool; it was validated when it completed and the
 * scenario's validator returned a verdict (a validator that throws leaves the run attempted
 * but not validated); it is correct when that verdict was a pass.
 */
import { comparePaired, type PairedComparison } from "./paired.js";
import type { RunRecord } from "./run-record.js";
import { wilson, type RateInterval } from "./wilson.js";

/** Scenarios with this tag are left out of speed: their timings are compaction's, not the model's. */
export const SPEED_EXCLUDED_TAG = "compaction";

export interface ReasoningStats {
  /** Σ reasoning messages ÷ attempted. */
  meanMessages: number;
  /** Validated runs with at least one reasoning message, and the correct ones among them. */
  withReasoning: { validated: number; correct: number; accuracy: RateInterval | null };
  /** Validated runs with none. */
  withoutReasoning: { validated: number; correct: number; accuracy: RateInterval | null };
}

export interface Metrics {
  /** Every recorded run. */
  attempted: number;
  completed: number;
  /** Completed runs whose validator gave a verdict. */
  validated: number;
  correct: number;
  /** Runs whose validator threw. */
  validationErrors: number;
  /** The most runs any one scenario has (forge's N). */
  runsPerScenario: number;
  /** Scr: correct ÷ attempted — the primary sort key. */
  score: RateInterval;
  /** VAcc: correct ÷ validated; null when nothing was validated. */
  validatedAccuracy: RateInterval | null;
  /** Cmp: completed ÷ attempted. */
  completeness: RateInterval;
  /** Eff: min(1, Σ ideal ÷ Σ iterations) over correct runs (1 = every correct run took the ideal path); null with no correct run. */
  efficiency: number | null;
  /** Wst: mean of max(0, iterations − ideal) over completed runs; null with no completed run. */
  wastedCalls: number | null;
  /** Spd: mean seconds over completed runs of scenarios not tagged `compaction`; null when there is none. */
  speedSeconds: number | null;
  /** Mean iterations over completed runs. */
  avgIterations: number;
  reasoning: ReasoningStats;
  compactionRuns: number;
  maxPhase: number;
}

export interface ConfigMetrics extends Metrics {
  config: string;
  backend: string;
  model: string;
  ablation: string;
  /** The newest generation among the config's records. */
  generation: number;
  scenarios: Record<string, Metrics>;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const meanOrNull = (xs: readonly number[]): number | null => (xs.length === 0 ? null : sum(xs) / xs.length);

/** @example isValidated(record) // completed, and the validator did not throw */
export const isValidated = (r: RunRecord): boolean => r.completed && r.validationError === undefined;

/** @example isCorrect(record) // validated and passed */
export const isCorrect = (r: RunRecord): boolean => isValidated(r) && r.correct;

function accuracyOf(runs: readonly RunRecord[]): { validated: number; correct: number; accuracy: RateInterval | null } {
  const validated = runs.filter(isValidated);
  const correct = validated.filter(isCorrect).length;
  return { validated: validated.length, correct, accuracy: validated.length === 0 ? null : wilson(correct, validated.length) };
}

/**
 * min(1, Σ ideal ÷ Σ iterations) over the correct runs: a ratio of sums, so a long scenario
 * weighs by its length; only correct runs, so failing fast does not look efficient.
 *
 * @example efficiencyOf([record({ iterations: 4, idealIterations: 2 })]) // 0.5
 */
export function efficiencyOf(records: readonly RunRecord[]): number | null {
  const correct = records.filter(isCorrect);
  const actual = sum(correct.map((r) => r.iterations));
  if (correct.length === 0 || actual === 0) return null;
  return Math.min(1, sum(correct.map((r) => r.idealIterations)) / actual);
}

/** @example computeMetrics(records).score.rate */
export function computeMetrics(records: readonly RunRecord[]): Metrics {
  const attempted = records.length;
  const done = records.filter((r) => r.completed);
  const { validated, correct, accuracy } = accuracyOf(records);
  const perScenario = new Map<string, number>();
  for (const r of records) perScenario.set(r.scenario, (perScenario.get(r.scenario) ?? 0) + 1);
  const timed = done.filter((r) => !r.tags.includes(SPEED_EXCLUDED_TAG));
  return {
    attempted,
    completed: done.length,
    validated,
    correct,
    validationErrors: records.filter((r) => r.validationError !== undefined).length,
    runsPerScenario: Math.max(0, ...perScenario.values()),
    score: wilson(correct, attempted),
    validatedAccuracy: accuracy,
    completeness: wilson(done.length, attempted),
    efficiency: efficiencyOf(records),
    wastedCalls: meanOrNull(done.map((r) => Math.max(0, r.iterations - r.idealIterations))),
    speedSeconds: meanOrNull(timed.map((r) => r.elapsedMs / 1000)),
    avgIterations: meanOrNull(done.map((r) => r.iterations)) ?? 0,
    reasoning: {
      meanMessages: attempted === 0 ? 0 : sum(records.map((r) => r.reasoningMessages)) / attempted,
      withReasoning: accuracyOf(records.filter((r) => r.reasoningMessages > 0)),
      withoutReasoning: accuracyOf(records.filter((r) => r.reasoningMessages === 0)),
    },
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

/** Missing values (no correct run for efficiency, no timed run for speed) sort last. */
const desc = (a: number | null, b: number | null): number => (b ?? -1) - (a ?? -1);
const asc = (a: number | null, b: number | null): number => (a ?? Infinity) - (b ?? Infinity) || 0;

/**
 * Best first, as forge ranks: score, then completeness, then efficiency, then speed (faster
 * first), then the config name so equal rows keep one order.
 *
 * @example [...configs].sort(compareRank)
 */
export function compareRank(a: ConfigMetrics, b: ConfigMetrics): number {
  return (
    desc(a.score.rate, b.score.rate) ||
    desc(a.completeness.rate, b.completeness.rate) ||
    desc(a.efficiency, b.efficiency) ||
    asc(a.speedSeconds, b.speedSeconds) ||
    a.config.localeCompare(b.config)
  );
}

/**
 * Per-config metrics (with per-scenario breakdown), best first (see compareRank).
 *
 * @example metricsByConfig(readRecords("eval_results.jsonl"))[0]?.config
 */
export function metricsByConfig(records: readonly RunRecord[]): ConfigMetrics[] {
  const out: ConfigMetrics[] = [];
  for (const [config, rs] of groupBy(records, (r) => r.config)) {
    const first = rs[0]!;
    const scenarios: Record<string, Metrics> = {};
    for (const [name, srs] of groupBy(rs, (r) => r.scenario)) scenarios[name] = computeMetrics(srs);
    const generation = Math.max(...rs.map((r) => r.generation));
    out.push({ config, backend: first.backend, model: first.model, ablation: first.ablation, generation, ...computeMetrics(rs), scenarios });
  }
  return out.sort(compareRank);
}

/** Pass/fail per `${scenario}|${runIndex}` for one config: the pairing unit of comparisons. */
export function passMap(records: readonly RunRecord[], config: string): Map<string, boolean> {
  return new Map(records.filter((r) => r.config === config).map((r) => [`${r.scenario}|${r.runIndex}`, isCorrect(r)]));
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
