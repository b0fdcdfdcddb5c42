/** The self-contained HTML dashboard: inline CSS and SVG only, so it opens offline. */
import { columnLegend, describeComparison, interval, METRIC_COLUMNS, reasoningLine, scenarioCell, scenarioLabels, scenarioLegend, type ReportData } from "./report-data.js";
import { esc, histogram, liftBars, scoreBars } from "./svg-charts.js";

const CSS = `body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}
.bar{fill:#4a7fc1}.pos{fill:#3a9b5c}.neg{fill:#c0504d}.ci{stroke:#222;stroke-width:2}.grid{stroke:#ccc}
.lbl,.val,.ax{font-size:11px;fill:#333}.note{color:#666;font-size:12px}.scroll{overflow-x:auto}`;

function scenarioTable(data: ReportData): string {
  const head = `<tr><th>scenario</th>${data.configs.map((c) => `<th>${esc(c.config)}</th>`).join("")}</tr>`;
  const rows = data.scenarios.map((s) => `<tr><td>${esc(s)}</td>${data.configs.map((c) => `<td>${c.scenarios[s] ? `${c.scenarios[s]!.correct}/${c.scenarios[s]!.attempted}` : "—"}</td>`).join("")}</tr>`);
  return `<div class="scroll"><table id="scenarios">${head}${rows.join("")}</table></div>`;
}

/** The terminal table's columns; a header's title is its formula, the Scr cell's its Wilson interval. */
function summaryTable(data: ReportData): string {
  const labels = scenarioLabels(data.scenarios);
  const head = `<tr><th>config</th>${METRIC_COLUMNS.map((c) => `<th title="${esc(c.formula)}">${c.header}</th>`).join("")}${data.scenarios.map((s) => `<th title="${esc(s)}">${esc(labels.get(s)!)}</th>`).join("")}</tr>`;
  const rows = data.configs.map(
    (c) =>
      `<tr><td>${esc(c.config)}</td>${METRIC_COLUMNS.map((col) => `<td${col.header === "Scr" ? ` title="Wilson 95%: ${esc(interval(c.score))}"` : ""}>${esc(col.cell(c))}</td>`).join("")}${data.scenarios.map((s) => `<td>${scenarioCell(c, s)}</td>`).join("")}</tr>`,
  );
  return `<div class="scroll"><table id="summary">${head}${rows.join("")}</table></div><p class="note">${esc(columnLegend())}</p><p class="note">Scenarios (score %): ${esc(scenarioLegend(data.scenarios))}</p>`;
}

function reasoningSection(data: ReportData): string {
  const lines = data.configs.flatMap((c) => {
    const line = reasoningLine(c);
    return line ? [`<li>${esc(c.config)}: ${esc(line)}</li>`] : [];
  });
  return lines.length ? `<h2>Reasoning</h2><ul>${lines.join("")}</ul>` : "";
}

/**
 * @example writeFileSync("dashboard.html", renderHtml(buildReportData(records), { title: "forge-ts eval" }));
 */
export function renderHtml(data: ReportData, options: { title?: string; note?: string } = {}): string {
  const title = options.title ?? "forge-ts eval dashboard";
  const score = scoreBars(data.configs.map((c) => ({ label: c.config, value: c.score.rate, low: c.score.low, high: c.score.high })));
  const lifts = data.comparisons.map(
    (c) => `<h3>${esc(c.group)}</h3><p class="note">${esc(describeComparison(c))}</p>${liftBars(c.lift.map((l) => ({ label: l.scenario, value: l.lift })))}`,
  );
  const iters = new Map<number, number>();
  for (const r of data.records) iters.set(r.iterations, (iters.get(r.iterations) ?? 0) + 1);
  const maxIt = Math.max(0, ...iters.keys());
  const buckets = Array.from({ length: maxIt + 1 }, (_, i) => ({ label: String(i), count: iters.get(i) ?? 0 }));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${CSS}</style></head>
<body>
<h1>${esc(title)}</h1>
${options.note ? `<p class="note">${esc(options.note)}</p>` : ""}
${data.notes.map((n) => `<p class="note">${esc(n)}</p>`).join("\n")}
<p class="note">${data.records.length} runs, ${data.configs.length} configs, ${data.scenarios.length} scenarios. Intervals are Wilson 95%.</p>
<h2>Score per config</h2>
${score}
${summaryTable(data)}
${reasoningSection(data)}
<h2>Reforged vs bare: lift per scenario</h2>
${lifts.length ? lifts.join("\n") : '<p class="note">No config has both a reforged and a bare run.</p>'}
<h2>Iterations per run</h2>
${histogram(buckets)}
<h2>Per-scenario results (correct/runs)</h2>
${scenarioTable(data)}
</body></html>
`;
}
