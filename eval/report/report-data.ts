/**
 * What every report view shows, computed once from the records: per-config metrics, the
 * scenario columns, and the reforged-vs-bare paired comparisons.
 */
import { compareConfigs, liftByScenario, metricsByConfig, type ConfigMetrics } from "../metrics.js";
import type { PairedComparison } from "../paired.js";
import type { RunRecord } from "../run-record.js";

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
}

export interface ReportFilter {
  ablations?: string[];
  tags?: string[];
}

/** @example filterRecords(records, { ablations: ["reforged", "bare"], tags: ["stateful"] }) */
export function filterRecords(records: readonly RunRecord[], filter: ReportFilter): RunRecord[] {
  const ab = filter.ablations ?? [];
  const tags = filter.tags ?? [];
  return records.filter((r) => (ab.length === 0 || ab.includes(r.ablation)) && (tags.length === 0 || r.tags.some((t) => tags.includes(t))));
}

const groupOf = (config: string): string => config.slice(0, config.indexOf("@"));

/**
 * @example const data = buildReportData(readRecords("eval_results.jsonl"));
 */
export function buildReportData(records: readonly RunRecord[]): ReportData {
  const configs = metricsByConfig(records);
  const scenarios = [...new Set(records.map((r) => r.scenario))];
  const comparisons: Comparison[] = [];
  // Pair each reforged config with the bare config of the same backend, model and strategy suffix.
  for (const c of configs.filter((x) => x.ablation === "reforged")) {
    const bare = c.config.replace("@reforged", "@bare");
    if (!configs.some((x) => x.config === bare)) continue;
    comparisons.push({ group: groupOf(c.config), a: c.config, b: bare, paired: compareConfigs(records, c.config, bare), lift: liftByScenario(records, c.config, bare) });
  }
  return { records: [...records], configs, scenarios, comparisons };
}

/**
 * Short, unique column labels for scenario names.
 *
 * @example scenarioLabels(["basic_2step_stateful"]).get("basic_2step_stateful") // "b2-S"
 */
export function scenarioLabels(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  for (const name of names) {
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
export const interval = (m: { rate: number; low: number; high: number }): string => `${pct(m.rate)} [${pct(m.low)}–${pct(m.high)}]`;

/** One sentence per comparison, e.g. "reforged vs bare: +45 pts (38 vs 2 discordant pairs), exact McNemar p=0.0001 — significant". */
export function describeComparison(c: Comparison): string {
  const p = c.paired;
  const sign = p.lift >= 0 ? "+" : "";
  const verdict = p.significant ? "significant at 5%" : "not significant at 5%";
  return `${c.group}: reforged vs bare ${sign}${Math.round(p.lift * 100)} pts over ${p.pairs} paired runs (${p.onlyA} only-reforged vs ${p.onlyB} only-bare passes), exact McNemar p=${p.pValue < 0.0001 ? p.pValue.toExponential(1) : p.pValue.toFixed(4)} — ${verdict}`;
}
