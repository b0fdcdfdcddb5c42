/** The compact (phone-width) list view: one block per config, best first. */
import { interval, pct, type ReportData } from "./report-data.js";

/**
 * @example console.log(renderList(buildReportData(records)));
 */
export function renderList(data: ReportData): string {
  if (data.configs.length === 0) return "(no runs)";
  const blocks = data.configs.map((c, i) => {
    const head = `${i + 1}. ${c.config}`;
    const stats = `   score ${interval(c.score)}  acc ${pct(c.accuracy.rate)}  compl ${pct(c.completeness.rate)}  eff ${c.efficiency.toFixed(2)}  n=${c.runs}`;
    const weak = Object.entries(c.scenarios)
      .filter(([, m]) => m.score.rate < 1)
      .sort((a, b) => a[1].score.rate - b[1].score.rate)
      .map(([s, m]) => `${s} ${m.correct}/${m.runs}`);
    return [head, stats, `   misses: ${weak.length ? weak.join(", ") : "none"}`].join("\n");
  });
  return blocks.join("\n");
}
