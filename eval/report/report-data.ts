/**
 * What every report view shows, computed once from the records: per-config metrics, the
 * scenario columns, the reforged-vs-bare paired comparisons, and the columns themselves
 * (forge's set, in forge's order, each with its formula) so the terminal table, Markdown and
 * HTML print the same thing.
 */
import { compareConfigs, liftByScenario, metricsByConfig, type ConfigMetrics, type Metrics } from "../metrics.js";
import type { PairedComparison } from "../paired.js";
import type { RunRecord } from "../run-record.js";
import { ALL_SCENARIOS } from "../scenarios/index.js";

export interface Comparison {
  /** backend:model[:mode] shared by both configs. */
  group: string;
  a: string;
  b: string;
  paired: PairedComparison;
  lift: { scenario: string; a: number; b: number; lift: number }[];
}

export interface ReportData {
  records: RunRecord[];
  configs: ConfigMetrics[];
  scenarios: string[];
  comparisons: Comparison[];
  /** One-line notes about what the report left out (older generations, duplicates, partial configs). */
  notes: string[];
}

export interface ReportFilter {
  ablations?: string[];
  tags?: string[];
  /** Scenarios dropped from the aggregates and the columns. */
  excludeScenarios?: string[];
}

/** @example filterRecords(records, { ablations: ["reforged", "bare"], tags: ["stateful"], excludeScenarios: ["error_recovery"] }) */
export function filterRecords(records: readonly RunRecord[], filter: ReportFilter): RunRecord[] {
  const ab = filter.ablations ?? [];
  const tags = filter.tags ?? [];
  const excluded = new Set(filter.excludeScenarios ?? []);
  return records.filter(
    (r) => (ab.length === 0 || ab.includes(r.ablation)) && (tags.length === 0 || r.tags.some((t) => tags.includes(t))) && !excluded.has(r.scenario),
  );
}

/** A config whose scenarios do not all have the same number of runs (a batch still under way). */
export interface PartialConfig {
  config: string;
  /** Runs of its scenario with the fewest, and of the one with the most. */
  fewest: number;
  most: number;
}

/**
 * The configs that are not complete. A config is complete when every scenario it has runs for
 * has as many runs as the scenario with the most: its aggregates then weigh every scenario
 * alike, as a finished batch's do.
 *
 * @example partialConfigs(records).map((p) => p.config) // ["sim:small-model@bare"]
 */
export function partialConfigs(records: readonly RunRecord[]): PartialConfig[] {
  const counts = new Map<string, Map<string, number>>();
  for (const r of records) {
    const perScenario = counts.get(r.config) ?? new Map<string, number>();
    perScenario.set(r.scenario, (perScenario.get(r.scenario) ?? 0) + 1);
    counts.set(r.config, perScenario);
  }
  return [...counts]
    .map(([config, perScenario]) => ({ config, fewest: Math.min(...perScenario.values()), most: Math.max(...perScenario.values()) }))
    .filter((c) => c.fewest < c.most)
    .sort((a, b) => a.config.localeCompare(b.config));
}

/** @example partialNote(partialConfigs(records)) // "left out 1 incomplete config(s) ...: sim:small-model@bare (2–5 runs per scenario)" */
export function partialNote(partial: readonly PartialConfig[]): string {
  const each = partial.map((p) => `${p.config} (${p.fewest}–${p.most} runs per scenario)`);
  return `left out ${partial.length} incomplete config(s), whose scenarios have unequal run counts (--include-partial keeps them): ${each.join(", ")}`;
}

const groupOf = (config: string): string => config.slice(0, config.indexOf("@"));

/**
 * @example const data = buildReportData(readRecords("eval_results.jsonl"));
 */
export function buildReportData(records: readonly RunRecord[], notes: readonly string[] = []): ReportData {
  const configs = metricsByConfig(records);
  const scenarios = orderScenarios(records.map((r) => r.scenario));
  const comparisons: Comparison[] = [];
  // Pair each reforged config with the bare config of the same backend, model and strategy suffix.
  for (const c of configs.filter((x) => x.ablation === "reforged")) {
    const bare = c.config.replace("@reforged", "@bare");
    if (!configs.some((x) => x.config === bare)) continue;
    comparisons.push({ group: groupOf(c.config), a: c.config, b: bare, paired: compareConfigs(records, c.config, bare), lift: liftByScenario(records, c.config, bare) });
  }
  return { records: [...records], configs, scenarios, comparisons, notes: [...notes] };
}

/**
 * forge's column abbreviations, in forge's column order: a scenario that has one is labelled
 * and placed as forge's table does, so the two tables read side by side.
 */
const FORGE_COLUMNS: readonly (readonly [scenario: string, label: string])[] = [
  ["relevance_detection", "rel"],
  ["argument_fidelity", "arg"],
  ["tool_selection", "tsl"],
  ["basic_2step", "b2s"],
  ["sequential_3step", "s3s"],
  ["conditional_routing", "crt"],
  ["sequential_reasoning", "srn"],
  ["error_recovery", "err"],
  ["data_gap_recovery", "dgr"],
  ["compaction_stress", "cmp"],
  ["phase2_compaction", "p2c"],
  ["data_gap_recovery_extended", "dge"],
  ["argument_transformation", "art"],
  ["grounded_synthesis", "grs"],
  ["inconsistent_api_recovery", "iar"],
  ["compaction_stress_stateful", "cmp_s"],
  ["phase2_compaction_stateful", "p2c_s"],
  ["inventory_audit", "inv"],
  ["supplier_deep_dive", "sdd"],
  ["relevance_detection_stateful", "rel_s"],
  ["argument_fidelity_stateful", "arg_s"],
  ["tool_selection_stateful", "tsl_s"],
  ["basic_2step_stateful", "b2s_s"],
  ["sequential_3step_stateful", "s3s_s"],
  ["conditional_routing_stateful", "crt_s"],
  ["sequential_reasoning_stateful", "srn_s"],
  ["error_recovery_stateful", "err_s"],
  ["data_gap_recovery_stateful", "dgr_s"],
  ["data_gap_recovery_extended_stateful", "dge_s"],
  ["argument_transformation_stateful", "art_s"],
  ["grounded_synthesis_stateful", "grs_s"],
  ["inconsistent_api_recovery_stateful", "iar_s"],
];
const FORGE_LABEL = new Map(FORGE_COLUMNS);
const FORGE_ORDER = new Map(FORGE_COLUMNS.map(([name], i) => [name, i]));

/**
 * Scenario columns in report order: forge's scenarios in forge's column order, then ours in
 * suite order, then names the suite no longer has (older generations' files) as first seen.
 *
 * @example orderScenarios(["basic_2step", "human_ask_user", "relevance_detection"]) // ["relevance_detection", "basic_2step", "human_ask_user"]
 */
export function orderScenarios(names: Iterable<string>): string[] {
  const suite = new Map(ALL_SCENARIOS.map((s, i) => [s.name, i]));
  const rank = (name: string): number => FORGE_ORDER.get(name) ?? FORGE_COLUMNS.length + (suite.get(name) ?? ALL_SCENARIOS.length);
  return [...new Set(names)]
    .map((name, seen) => ({ name, seen, rank: rank(name) }))
    .sort((a, b) => a.rank - b.rank || a.seen - b.seen)
    .map((x) => x.name);
}

/**
 * Short, unique column labels for scenario names: forge's abbreviation where the scenario has
 * one, else one made from the name's words ("compaction_chain_p1" → "ccp1"; a stateful variant
 * gets "-S").
 *
 * @example scenarioLabels(["basic_2step_stateful", "human_ask_user"]) // "b2s_s", "hau"
 */
export function scenarioLabels(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  // forge's labels are taken first, so a made-up label never shadows one of theirs.
  const used = new Set(names.flatMap((n) => FORGE_LABEL.get(n) ?? []));
  for (const name of names) {
    const forge = FORGE_LABEL.get(name);
    if (forge !== undefined) {
      out.set(name, forge);
      continue;
    }
    const stateful = name.includes("_stateful");
    const parts = name.replace("_stateful", "").split("_");
    // "2step" -> "2", "p1" -> "p1", "phase2" -> "p2", "basic" -> "b".
    const label = parts.map((p) => (/^\d/.test(p) ? p.replace(/[a-z]+$/, "") : p[0]! + p.replace(/\D/g, ""))).join("") + (stateful ? "-S" : "");
    let unique = label;
    for (let i = 2; used.has(unique); i++) unique = `${label}${i}`;
    used.add(unique);
    out.set(name, unique);
  }
  return out;
}

export const pct = (x: number): string => `${Math.round(x * 100)}%`;
/** One decimal, as forge prints its rates: "88.4%". */
export const pct1 = (x: number): string => `${(x * 100).toFixed(1)}%`;
export const interval = (m: { rate: number; low: number; high: number }): string => `${pct(m.rate)} [${pct(m.low)}–${pct(m.high)}]`;

/** A metric column: its header, the formula the legend gives, and its cell for a config or a scenario. */
export interface MetricColumn {
  header: string;
  formula: string;
  cell(m: Metrics): string;
}

/** "—": the metric's denominator is empty (no validated, correct or timed run). */
const orDash = (x: number | null, show: (x: number) => string): string => (x === null ? "—" : show(x));

/** forge's columns, in forge's order: Scr VAcc Cmp Eff Wst Spd N. */
export const METRIC_COLUMNS: readonly MetricColumn[] = [
  { header: "Scr", formula: "score = correct ÷ attempted", cell: (m) => pct1(m.score.rate) },
  { header: "VAcc", formula: "validated accuracy = correct ÷ validated (completed, validator did not throw)", cell: (m) => orDash(m.validatedAccuracy?.rate ?? null, pct1) },
  { header: "Cmp", formula: "completeness = completed ÷ attempted", cell: (m) => pct1(m.completeness.rate) },
  { header: "Eff", formula: "efficiency = min(1, Σ ideal ÷ Σ iterations) over correct runs", cell: (m) => orDash(m.efficiency, pct) },
  { header: "Wst", formula: "wasted calls = mean max(0, iterations − ideal) over completed runs", cell: (m) => orDash(m.wastedCalls, (x) => x.toFixed(1)) },
  { header: "Spd", formula: "speed = mean seconds over completed runs, scenarios tagged compaction left out", cell: (m) => orDash(m.speedSeconds, (x) => `${x.toFixed(1)}s`) },
  { header: "N", formula: "runs per scenario (the most any scenario has)", cell: (m) => String(m.runsPerScenario) },
];

/** A config's cell in a scenario column: that scenario's score in percent (no sign, as forge prints it), "—" without runs. */
export const scenarioCell = (c: ConfigMetrics, scenario: string): string => {
  const m = c.scenarios[scenario];
  return m ? String(Math.round(m.score.rate * 100)) : "—";
};

/** The legend line naming each column's formula. */
export const columnLegend = (): string => METRIC_COLUMNS.map((c) => `${c.header}: ${c.formula}`).join("; ");

/** The legend line naming each scenario column. */
export const scenarioLegend = (scenarios: readonly string[]): string => {
  const labels = scenarioLabels(scenarios);
  return scenarios.map((s) => `${labels.get(s)}=${s}`).join("  ");
};

/**
 * The reasoning statistics of a config in one line, or undefined when no run reasoned.
 *
 * @example reasoningLine(config) // "reasoning: 1.5 messages per run; validated accuracy 92% with reasoning (40 runs), 75% without (8)"
 */
export function reasoningLine(m: Metrics): string | undefined {
  const r = m.reasoning;
  if (r.meanMessages === 0) return undefined;
  const acc = (x: { validated: number; accuracy: { rate: number } | null }): string => (x.accuracy ? pct(x.accuracy.rate) : "—");
  return `reasoning: ${r.meanMessages.toFixed(1)} messages per run; validated accuracy ${acc(r.withReasoning)} with reasoning (${r.withReasoning.validated} runs), ${acc(r.withoutReasoning)} without (${r.withoutReasoning.validated})`;
}

/** One sentence per comparison, e.g. "reforged vs bare: +45 pts (38 vs 2 discordant pairs), exact McNemar p=0.0001 — significant". */
export function describeComparison(c: Comparison): string {
  const p = c.paired;
  const sign = p.lift >= 0 ? "+" : "";
  const verdict = p.significant ? "significant at 5%" : "not significant at 5%";
  return `${c.group}: reforged vs bare ${sign}${Math.round(p.lift * 100)} pts over ${p.pairs} paired runs (${p.onlyA} only-reforged vs ${p.onlyB} only-bare passes), exact McNemar p=${p.pValue < 0.0001 ? p.pValue.toExponential(1) : p.pValue.toFixed(4)} — ${verdict}`;
}
