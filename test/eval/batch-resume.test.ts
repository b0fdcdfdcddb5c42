import { describe, expect, it, vi } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { batchProgress, loadBatchConfig, runBatch } from "../../eval/batch.js";
import { batchMain } from "../../eval/cli/batch.js";
import { EVAL_GENERATION } from "../../eval/generation.js";
import { readRecords } from "../../eval/run-record.js";
import { record } from "./fixtures.js";
import { cliArgs } from "../support/cli.js";

const ROOT = resolve(import.meta.dirname, "../..");

function lineCount(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").length - 1 : 0;
}

function runBatchCli(args: string[], killAfterLines?: { path: string; lines: number }): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((done, fail) => {
    // One process (node + the tsx loader), not the tsx CLI wrapper: killing the wrapper would
    // leave its node child running and writing.
    const child = spawn(process.execPath, cliArgs("eval/cli/batch.ts", ...args), { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    if (killAfterLines) {
      timer = setInterval(() => {
        if (lineCount(killAfterLines.path) >= killAfterLines.lines) {
          clearInterval(timer);
          child.kill("SIGKILL"); // a crash, not a polite stop: the writer gets no chance to finish
        }
      }, 5);
    }
    child.on("error", fail);
    child.on("exit", (code, signal) => {
      if (timer) clearInterval(timer);
      if (code !== 0 && signal === null) fail(new Error(`batch exited ${code}: ${stderr}`));
      else done({ code, signal });
    });
  });
}

describe("batch resume", () => {
  it("a batch killed mid-way resumes with no duplicate and no missing run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "forge-batch-"));
    const configPath = join(dir, "cfg.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        name: "resume-test",
        seed: 7,
        tags: ["plumbing", "model_quality"],
        rows: [
          { backend: "sim", model: "small-model", ablation: "reforged" },
          { backend: "sim", model: "small-model", ablation: "bare" },
        ],
      }),
    );
    const out = join(dir, "results.jsonl");
    const runs = 4;
    const config = loadBatchConfig(configPath);
    const expected = batchProgress({ config, runs, out }, []).reduce((n, r) => n + r.expected, 0);

    const first = await runBatchCli(["--config", configPath, "--runs", String(runs), "--out", out], { path: out, lines: 15 });
    expect(first.signal).toBe("SIGKILL");
    const afterKill = lineCount(out);
    expect(afterKill).toBeGreaterThanOrEqual(15);
    expect(afterKill).toBeLessThan(expected);

    const second = await runBatchCli(["--config", configPath, "--runs", String(runs), "--out", out]);
    expect(second.code).toBe(0);
    const keys = readRecords(out).map((r) => r.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBe(expected);
    const progress = batchProgress({ config, runs, out }, readRecords(out));
    expect(progress.every((p) => p.done === p.expected)).toBe(true);

    // A third run has nothing left to do.
    await runBatchCli(["--config", configPath, "--runs", String(runs), "--out", out]);
    expect(lineCount(out)).toBe(expected);
  }, 300_000);
});

describe("batch resume across generations", () => {
  it("skips only runs recorded at the current generation; older records stay and are redone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "forge-batch-gen-"));
    const configPath = join(dir, "cfg.json");
    writeFileSync(configPath, JSON.stringify({ name: "gen-test", seed: 3, scenarios: ["basic_2step"], rows: [{ backend: "sim", model: "small-model", ablation: "reforged" }] }));
    const out = join(dir, "results.jsonl");
    const old = [0, 1, 2].map((runIndex) => record({ runIndex, generation: EVAL_GENERATION - 1 }));
    const current = record({ runIndex: 1, generation: EVAL_GENERATION });
    // The oldest line is as the harness wrote it before records carried a generation.
    const { generation: _dropped, ...legacy } = record({ runIndex: 2 });
    writeFileSync(out, [...old, current, legacy].map((r) => JSON.stringify(r)).join("\n") + "\n");
    const config = loadBatchConfig(configPath);

    expect(batchProgress({ config, runs: 3, out }, readRecords(out))).toEqual([{ config: "sim:small-model@reforged", done: 1, expected: 3 }]);
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      await batchMain(["--config", configPath, "--runs", "3", "--out", out, "--progress"]);
      expect(log.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringMatching(/^sim:small-model@reforged\s+1\/3  33%$/)]);
    } finally {
      log.mockRestore();
    }

    const before = readFileSync(out, "utf8");
    expect(await runBatch({ config, runs: 3, out })).toEqual({ ran: 2, skipped: 1 });
    expect(readFileSync(out, "utf8").startsWith(before)).toBe(true); // append-only: nothing older is rewritten or deleted
    const after = readRecords(out);
    expect(after.slice(0, 3).map((r) => r.generation)).toEqual([EVAL_GENERATION - 1, EVAL_GENERATION - 1, EVAL_GENERATION - 1]);
    expect(after[4]!.generation).toBe(1);
    expect(after.slice(5).map((r) => [r.runIndex, r.generation])).toEqual([[0, EVAL_GENERATION], [2, EVAL_GENERATION]]);
    expect(batchProgress({ config, runs: 3, out }, after)).toEqual([{ config: "sim:small-model@reforged", done: 3, expected: 3 }]);
    expect(await runBatch({ config, runs: 3, out })).toEqual({ ran: 0, skipped: 3 });
  }, 300_000);
});
