import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildReportData, filterRecords, scenarioLabels } from "../../eval/report/report-data.js";
import { renderTable } from "../../eval/report/table.js";
import { renderList } from "../../eval/report/list.js";
import { writeMarkdownReports } from "../../eval/report/markdown.js";
import { renderHtml } from "../../eval/report/html.js";
import { record } from "./fixtures.js";

const records = [0, 1, 2, 3].flatMap((i) => [
  record({ config: "sim:small-model@reforged", runIndex: i, iterations: 3 }),
  record({ config: "sim:small-model@reforged", scenario: "error_recovery", tags: ["plumbing"], runIndex: i, idealIterations: 3, iterations: 3 }),
  record({ config: "sim:small-model@bare", ablation: "bare", runIndex: i, correct: i === 0 }),
  record({ config: "sim:small-model@bare", ablation: "bare", scenario: "error_recovery", runIndex: i, completed: false, correct: false, errorType: "ToolExecutionError" }),
]);

describe("reports", () => {
  const data = buildReportData(records);

  it("sorts configs by score and pairs reforged with bare", () => {
    expect(data.configs.map((c) => c.config)).toEqual(["sim:small-model@reforged", "sim:small-model@bare"]);
    expect(data.comparisons).toHaveLength(1);
    expect(data.comparisons[0]!.paired).toMatchObject({ pairs: 8, onlyA: 7, onlyB: 0 });
  });

  it("renders a table with per-scenario columns and the paired verdict", () => {
    const t = renderTable(data);
    const lines = t.split("\n");
    expect(lines[0]).toMatch(/^config\s+n\s+score \[95% CI\].*b2\s+er$/);
    expect(lines[2]).toMatch(/^sim:small-model@reforged\s+8\s+100% \[68%–100%\].*100%\s+100%$/);
    expect(lines[3]).toMatch(/^sim:small-model@bare\s+8\s+13%.*25%\s+0%$/);
    expect(t).toContain("exact McNemar p=0.0156 — significant at 5%");
  });

  it("renders the list view with misses", () => {
    expect(renderList(data)).toContain("2. sim:small-model@bare\n   score 13%");
    expect(renderList(data)).toContain("misses: error_recovery 0/4, basic_2step 1/4");
  });

  it("writes a markdown summary and one page per config", () => {
    const dir = mkdtempSync(join(tmpdir(), "forge-md-"));
    writeMarkdownReports(data, dir);
    expect(readdirSync(dir).sort()).toEqual(["sim_small-model_bare.md", "sim_small-model_reforged.md", "summary.md"]);
    expect(readFileSync(join(dir, "summary.md"), "utf8")).toContain("| [sim:small-model@reforged](sim_small-model_reforged.md) | 8 | 100% [68%–100%] |");
  });

  it("renders a self-contained HTML dashboard with the three charts", () => {
    const html = renderHtml(data, { note: "SIMULATED <model>" });
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|src=|href=|https?:\/\//);
    expect(html).toContain('aria-label="score per config"');
    expect(html).toContain('aria-label="lift per scenario"');
    expect(html).toContain('aria-label="iterations histogram"');
    expect(html).toContain("SIMULATED &#60;model&#62;");
  });

  it("filters by ablation and tags; labels are unique", () => {
    expect(filterRecords(records, { ablations: ["bare"] }).every((r) => r.ablation === "bare")).toBe(true);
    expect(filterRecords(records, { tags: ["nope"] })).toEqual([]);
    const labels = scenarioLabels(["basic_2step", "basic_2step_stateful", "basic_2step_stateful_tre", "compaction_chain_p1", "compaction_chain_p2", "conditional_routing", "compaction_routing"]);
    expect([...labels.values()]).toEqual(["b2", "b2-S", "b2t-S", "ccp1", "ccp2", "cr", "cr2"]);
  });
});
