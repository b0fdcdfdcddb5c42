/**
 * The per-family view (`eval:report --by-family`): one row per (scenario family, config),
 * with the table's metric columns, so bare / bare+any / reforged read side by side for each
 * kind of skill.
 */
import { SCENARIO_FAMILIES, familyOf } from "../families.js";
import { metricsByConfig } from "../metrics.js";
import type { RunRecord } from "../run-record.js";
import { interval, METRIC_COLUMNS } from "./report-data.js";

/**
 * @example console.log(renderFamilies(records));
 * // family    config                    Scr [95% CI]    VAcc  Cmp ...
 */
export function renderFamilies(records: readonly RunRecord[]): string {
  const columns = METRIC_COLUMNS.filter((c) => c.header !== "Scr");
  const header = ["family", "config", "Scr [95% CI]", ...columns.map((c) => c.header)];
  const rows: string[][] = [];
  for (const family of SCENARIO_FAMILIES) {
    const mine = records.filter((r) => familyOf(r.tags) === family);
    for (const c of metricsByConfig(mine)) rows.push([family, c.config, interval(c.score), ...columns.map((col) => col.cell(c))]);
  }
  if (rows.length === 0) return "(no runs)";
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
