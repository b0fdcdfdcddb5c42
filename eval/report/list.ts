/** The compact (phone-width) list view: one block per config, best first. */
import { interval, METRIC_COLUMNS, reasoningLine, type ReportData } from "./report-data.js";

/**
 * @example console.log(renderList(buildReportData(records)));
 */
export function renderList(data: ReportData): string {
  if (data.configs.length === 0) return "(no runs)";
  const blocks = data.configs.map((c, i) => {
    const head = `${i + 1}. ${c.config}`;
    const stats = `   ${METRIC_COLUMNS.map((col) => `${col.header} ${col.cell(c)}`).join("  ")}`;
    const ci = `   score ${interval(c.score)} (Wilson 95%) over ${c.attempted} runs${c.validationErrors > 0 ? `; ${c.validationErrors} validator error(s), not validated` : ""}`;
    const reasoning = reasoningLine(c);
    const weak = Object.entries(c.scenarios)
      .filter(([, m]) => m.score.rate < 1)
      .sort((a, b) => a[1].score.rate - b[1].score.rate)
      .map(([s, m]) => `${s} ${m.correct}/${m.attempted}`);
    return [head, stats, ci, ...(reasoning ? [`   ${reasoning}`] : []), `   misses: ${weak.length ? weak.join(", ") : "none"}`].join("\n");
  });
  return blocks.join("\n");
}
