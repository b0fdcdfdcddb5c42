import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildReportData, filterRecords, orderScenarios, scenarioLabels } from "../../eval/report/report-data.js";
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

  it("renders forge's columns in forge's order, per-scenario scores, a legend of formulas and the paired verdict", () => {
    const t = renderTable(data);
    const lines = t.split("\n");
    expect(lines[0]!.split(/\s+/)).toEqual(["config", "Scr", "VAcc", "Cmp", "Eff", "Wst", "Spd", "N", "b2s", "err"]);
    expect(lines[2]!.split(/\s+/)).toEqual(["sim:small-model@reforged", "100.0%", "100.0%", "100.0%", "83%", "0.5", "0.0s", "4", "100", "100"]);
    expect(lines[3]!.split(/\s+/)).toEqual(["sim:small-model@bare", "12.5%", "25.0%", "50.0%", "100%", "0.0", "0.0s", "4", "25", "0"]);
    expect(t).toContain("Scr   score = correct ÷ attempted\nVAcc  validated accuracy = correct ÷ validated");
    expect(t).toContain("Eff   efficiency = min(1, Σ ideal ÷ Σ iterations) over correct runs");
    expect(t).toContain("Spd   speed = mean seconds over completed runs, scenarios tagged compaction left out");
    expect(t).toContain("scenarios (score %): b2s=basic_2step  err=error_recovery");
    expect(t).toContain("exact McNemar p=0.0156 — significant at 5%");
  });

  it("a validator error is attempted but not validated; missing denominators print —", () => {
    const rs = [
      record({ config: "c@reforged", runIndex: 0 }),
      record({ config: "c@reforged", runIndex: 1, correct: false, validationError: "TypeError: x", errorType: "ValidationError" }),
      record({ config: "c@reforged", runIndex: 2, completed: false, correct: false, errorType: "Incomplete" }),
      record({ config: "c@bare", ablation: "bare", scenario: "compaction_stress", tags: ["compaction"], completed: false, correct: false }),
    ];
    const lines = renderTable(buildReportData(rs)).split("\n");
    expect(lines[2]!.split(/\s+/)).toEqual(["c@reforged", "33.3%", "100.0%", "66.7%", "100%", "0.0", "0.0s", "3", "33", "—"]);
    expect(lines[3]!.split(/\s+/)).toEqual(["c@bare", "0.0%", "—", "0.0%", "—", "—", "—", "1", "—", "0"]);
    expect(renderList(buildReportData(rs))).toContain("1 validator error(s), not validated");
  });

  it("renders the list view with the Wilson interval, reasoning statistics and misses", () => {
    expect(renderList(data)).toContain("2. sim:small-model@bare\n   Scr 12.5%  VAcc 25.0%  Cmp 50.0%  Eff 100%  Wst 0.0  Spd 0.0s  N 4\n   score 13% [2%–47%] (Wilson 95%) over 8 runs");
    expect(renderList(data)).toContain("misses: error_recovery 0/4, basic_2step 1/4");
    expect(renderList(data)).not.toContain("reasoning:");
    const reasoned = buildReportData([record({ reasoningMessages: 3 }), record({ runIndex: 1, correct: false, errorType: "ValidationFailed" })]);
    expect(renderList(reasoned)).toContain("reasoning: 1.5 messages per run; validated accuracy 100% with reasoning (1 runs), 0% without (1)");
  });

  it("writes a markdown summary and one page per config", () => {
    const dir = mkdtempSync(join(tmpdir(), "forge-md-"));
    writeMarkdownReports(data, dir);
    expect(readdirSync(dir).sort()).toEqual(["sim_small-model_bare.md", "sim_small-model_reforged.md", "summary.md"]);
    const summary = readFileSync(join(dir, "summary.md"), "utf8");
    expect(summary).toContain("| config | Scr | VAcc | Cmp | Eff | Wst | Spd | N | b2s | err |");
    expect(summary).toContain("| [sim:small-model@reforged](sim_small-model_reforged.md) | 100.0% | 100.0% | 100.0% | 83% | 0.5 | 0.0s | 4 | 100 | 100 |");
    expect(summary).toContain("Wst: wasted calls = mean max(0, iterations − ideal) over completed runs");
    expect(readFileSync(join(dir, "sim_small-model_bare.md"), "utf8")).toContain("Score 13% [2%–47%] (Wilson 95%) over 8 runs, generation 2.");
  });

  it("renders a self-contained HTML dashboard with the three charts", () => {
    const html = renderHtml(data, { note: "SIMULATED <model>" });
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|src=|href=|https?:\/\//);
    expect(html).toContain('aria-label="score per config"');
    expect(html).toContain('aria-label="lift per scenario"');
    expect(html).toContain('aria-label="iterations histogram"');
    expect(html).toContain("SIMULATED &#60;model&#62;");
    const summary = /<table id="summary">(.*?)<\/table>/.exec(html)![1]!;
    expect([...summary.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1])).toEqual(["config", "Scr", "VAcc", "Cmp", "Eff", "Wst", "Spd", "N", "b2s", "err"]);
    expect(summary).toContain('title="efficiency = min(1, Σ ideal ÷ Σ iterations) over correct runs"');
    expect(html).toContain("Spd: speed = mean seconds over completed runs");
  });

  it("filters by ablation and tags; labels are unique", () => {
    expect(filterRecords(records, { ablations: ["bare"] }).every((r) => r.ablation === "bare")).toBe(true);
    expect(filterRecords(records, { tags: ["nope"] })).toEqual([]);
    const names = ["basic_2step", "basic_2step_stateful", "basic_2step_stateful_tre", "compaction_chain_p1", "compaction_chain_p2", "conditional_routing", "compaction_routing", "grounded_synthesis_stateful", "inventory_audit"];
    const labels = scenarioLabels(names);
    expect(names.map((n) => labels.get(n))).toEqual(["b2s", "b2s_s", "b2t-S", "ccp1", "ccp2", "crt", "cr", "grs_s", "inv"]);
    // A made-up label never takes one of forge's, whatever the order.
    expect(scenarioLabels(["run_exact_view", "relevance_detection"]).get("run_exact_view")).toBe("rev");
    expect(scenarioLabels(["r_e_l", "relevance_detection"])).toEqual(new Map([["r_e_l", "rel2"], ["relevance_detection", "rel"]]));
  });

  it("orders scenario columns as forge's table, then the suite's own, then unknown names", () => {
    expect(orderScenarios(["human_ask_user", "basic_2step", "gone_scenario", "relevance_detection", "basic_2step_stateful", "error_recovery"])).toEqual([
      "relevance_detection", "basic_2step", "error_recovery", "basic_2step_stateful", "human_ask_user", "gone_scenario",
    ]);
  });
});
