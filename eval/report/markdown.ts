/** Markdown reports: a summary (all configs) and one page per config with its scenario rows. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ConfigMetrics } from "../metrics.js";
import { describeComparison, interval, pct, type ReportData } from "./report-data.js";

const slug = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, "_");
const row = (cells: string[]): string => `| ${cells.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`;

/** @example renderSummaryMarkdown(data) // "# Eval summary\n\n| config | ..." */
export function renderSummaryMarkdown(data: ReportData): string {
  const lines = ["# Eval summary", "", row(["config", "runs", "score [95% CI]", "accuracy", "completeness", "efficiency", "wasted calls", "s/run"])];
  lines.push(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
  for (const c of data.configs) {
    lines.push(row([`[${c.config}](${slug(c.config)}.md)`, String(c.runs), interval(c.score), pct(c.accuracy.rate), pct(c.completeness.rate), c.efficiency.toFixed(2), c.wastedCalls.toFixed(1), c.avgSeconds.toFixed(2)]));
  }
  if (data.comparisons.length > 0) lines.push("", "## Paired comparisons", "", ...data.comparisons.map((c) => `- ${describeComparison(c)}`));
  return `${lines.join("\n")}\n`;
}

/** @example renderConfigMarkdown(data.configs[0]) */
export function renderConfigMarkdown(c: ConfigMetrics): string {
  const lines = [`# ${c.config}`, "", `Score ${interval(c.score)} over ${c.runs} runs.`, ""];
  lines.push(row(["scenario", "runs", "score [95% CI]", "accuracy", "completeness", "efficiency", "wasted", "compaction runs", "max phase"]));
  lines.push(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
  for (const [name, m] of Object.entries(c.scenarios)) {
    lines.push(row([name, String(m.runs), interval(m.score), pct(m.accuracy.rate), pct(m.completeness.rate), m.efficiency.toFixed(2), m.wastedCalls.toFixed(1), String(m.compactionRuns), String(m.maxPhase)]));
  }
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
