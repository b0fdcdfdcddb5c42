/** The terminal table: configs sorted by score, aggregate columns, then one column per scenario. */
import { interval, pct, scenarioLabels, type ReportData, describeComparison } from "./report-data.js";

function render(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r, ri) => {
    const line = r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
    return ri === 0 ? `${line}\n${widths.map((w) => "-".repeat(w)).join("  ")}` : line;
  }).join("\n");
}

/**
 * @example console.log(renderTable(buildReportData(records)));
 */
export function renderTable(data: ReportData): string {
  if (data.configs.length === 0) return "(no runs)";
  const labels = scenarioLabels(data.scenarios);
  const header = ["config", "n", "score [95% CI]", "acc", "compl", "eff", "wasted", "s/run", ...data.scenarios.map((s) => labels.get(s)!)];
  const rows = data.configs.map((c) => [
    c.config,
    String(c.runs),
    interval(c.score),
    pct(c.accuracy.rate),
    pct(c.completeness.rate),
    c.efficiency.toFixed(2),
    c.wastedCalls.toFixed(1),
    c.avgSeconds.toFixed(2),
    ...data.scenarios.map((s) => (c.scenarios[s] ? pct(c.scenarios[s]!.score.rate) : "—")),
  ]);
  const legend = data.scenarios.map((s) => `${labels.get(s)}=${s}`).join("  ");
  const comparisons = data.comparisons.map(describeComparison);
  return [render([header, ...rows]), "", `scenarios: ${legend}`, ...(comparisons.length ? ["", ...comparisons] : [])].join("\n");
}
