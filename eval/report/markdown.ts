/** Markdown reports: a summary (all configs, the terminal table's columns) and one page per config with its scenario rows. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ConfigMetrics } from "../metrics.js";
import { columnLegend, describeComparison, interval, METRIC_COLUMNS, reasoningLine, scenarioCell, scenarioLabels, scenarioLegend, type ReportData } from "./report-data.js";

const slug = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, "_");
const row = (cells: string[]): string => `| ${cells.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`;
const align = (n: number): string => row(["---", ...Array.from({ length: n }, () => "---:")]);

/** @example renderSummaryMarkdown(data) // "# Eval summary\n\n| config | Scr | VAcc | ..." */
export function renderSummaryMarkdown(data: ReportData): string {
  const labels = scenarioLabels(data.scenarios);
  const header = ["config", ...METRIC_COLUMNS.map((c) => c.header), ...data.scenarios.map((s) => labels.get(s)!)];
  const lines = ["# Eval summary", "", row(header), align(header.length - 1)];
  for (const c of data.configs) {
    lines.push(row([`[${c.config}](${slug(c.config)}.md)`, ...METRIC_COLUMNS.map((col) => col.cell(c)), ...data.scenarios.map((s) => scenarioCell(c, s))]));
  }
  lines.push("", columnLegend(), "", `Scenarios (score %): ${scenarioLegend(data.scenarios)}`);
  if (data.notes.length > 0) lines.push("", ...data.notes.map((n) => `- ${n}`));
  if (data.comparisons.length > 0) lines.push("", "## Paired comparisons", "", ...data.comparisons.map((c) => `- ${describeComparison(c)}`));
  return `${lines.join("\n")}\n`;
}

/** @example renderConfigMarkdown(data.configs[0]) */
export function renderConfigMarkdown(c: ConfigMetrics): string {
  const reasoning = reasoningLine(c);
  const lines = [`# ${c.config}`, "", `Score ${interval(c.score)} (Wilson 95%) over ${c.attempted} runs, generation ${c.generation}.`, ...(reasoning ? ["", `${reasoning[0]!.toUpperCase()}${reasoning.slice(1)}.`] : []), ""];
  const header = ["scenario", ...METRIC_COLUMNS.map((col) => col.header), "Scr 95% CI", "compaction runs", "max phase"];
  lines.push(row(header), align(header.length - 1));
  for (const [name, m] of Object.entries(c.scenarios)) {
    lines.push(row([name, ...METRIC_COLUMNS.map((col) => col.cell(m)), interval(m.score), String(m.compactionRuns), String(m.maxPhase)]));
  }
  lines.push("", columnLegend());
  return `${lines.join("\n")}\n`;
}

/**
 * Write summary.md plus one file per config into `dir`; returns the paths written.
 *
 * @example writeMarkdownReports(data, "reports/")
 */
export function writeMarkdownReports(data: ReportData, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const written = [join(dir, "summary.md")];
  writeFileSync(written[0]!, renderSummaryMarkdown(data));
  for (const c of data.configs) {
    const path = join(dir, `${slug(c.config)}.md`);
    writeFileSync(path, renderConfigMarkdown(c));
    written.push(path);
  }
  return written;
}
