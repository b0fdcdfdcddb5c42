import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchProgress, loadBatchConfig, runBatch } from "../../eval/batch.js";
import { compareConfigs, metricsByConfig } from "../../eval/metrics.js";
import { readRecords, type RunRecord } from "../../eval/run-record.js";
import { ALL_SCENARIOS } from "../../eval/scenarios/index.js";
import { buildReportData } from "../../eval/report/report-data.js";
import { renderTable } from "../../eval/report/table.js";

/** What must not change between two runs with the same seed (timings and timestamps may). */
const outcome = (r: RunRecord) => [r.key, r.correct, r.completed, r.iterations, r.errorType ?? "", r.compactionPhases.join(",")].join(" ");

describe("CI-sized eval: every scenario x {reforged, bare} on the simulated small model", () => {
  it("records every run once, metrics match the JSONL, resume and seeds are exact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "forge-ci-"));
    const config = loadBatchConfig("sim");
    const runs = 2;
    const out = join(dir, "results.jsonl");
    const seen: RunRecord[] = [];
    const first = await runBatch({ config, runs, out, onRecord: (r) => seen.push(r) });

    const expected = ALL_SCENARIOS.length * runs * config.rows.length;
    expect(first).toEqual({ ran: expected, skipped: 0 });
    const onDisk = readRecords(out);
    expect(onDisk.map((r) => r.key)).toEqual(seen.map((r) => r.key));
    expect(new Set(onDisk.map((r) => r.key)).size).toBe(expected);
    expect(batchProgress({ config, runs, out }, onDisk).every((p) => p.done === p.expected)).toBe(true);

    for (const r of onDisk) {
      expect(r.wastedCalls).toBe(Math.max(0, r.iterations - r.idealIterations));
      if (r.correct) expect(r.completed).toBe(true);
      else expect(r.errorType).toBeDefined();
    }
    expect(metricsByConfig(onDisk)).toEqual(metricsByConfig(seen));

    // Resume: a second pass over the same file has nothing to do.
    expect(await runBatch({ config, runs, out })).toEqual({ ran: 0, skipped: expected });
    expect(readRecords(out)).toHaveLength(expected);

    // Same seed, fresh file: identical outcomes run for run.
    const again: RunRecord[] = [];
    await runBatch({ config, runs, out: join(dir, "again.jsonl"), onRecord: (r) => again.push(r) });
    expect(again.map(outcome)).toEqual(seen.map(outcome));

    const [reforged, bare] = ["sim:small-model@reforged", "sim:small-model@bare"].map((c) => metricsByConfig(onDisk).find((m) => m.config === c)!);
    expect(reforged!.score.rate).toBeGreaterThan(bare!.score.rate);
    expect(compareConfigs(onDisk, "sim:small-model@reforged", "sim:small-model@bare").significant).toBe(true);
    expect(renderTable(buildReportData(onDisk))).toContain("sim:small-model@reforged");
  }, 300_000);
});
