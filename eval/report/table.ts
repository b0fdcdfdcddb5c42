/**
 * The terminal table, laid out as forge's leaderboard: configs best first, forge's metric
 * columns (Scr VAcc Cmp Eff Wst Spd N), one column per scenario, then a legend naming each
 * column's formula and each scenario column.
 */
import { describeComparison, METRIC_COLUMNS, scenarioCell, scenarioLabels, scenarioLegend, type ReportData } from "./report-data.js";

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
  const header = ["config", ...METRIC_COLUMNS.map((c) => c.header), ...data.scenarios.map((s) => labels.get(s)!)];
  const rows = data.configs.map((c) => [c.config, ...METRIC_COLUMNS.map((col) => col.cell(c)), ...data.scenarios.map((s) => scenarioCell(c, s))]);
  const comparisons = data.comparisons.map(describeComparison);
  return [
    render([header, ...rows]),
    "",
    // One column per line: the legend is read while looking at the table, not scrolled across.
    ...METRIC_COLUMNS.map((c) => `${c.header.padEnd(4)}  ${c.formula}`),
    `scenarios (score %): ${scenarioLegend(data.scenarios)}`,
    ...(comparisons.length ? ["", ...comparisons] : []),
  ].join("\n");
}
