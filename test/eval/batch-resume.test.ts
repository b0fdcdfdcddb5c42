import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { batchProgress, loadBatchConfig } from "../../eval/batch.js";
import { readRecords } from "../../eval/run-record.js";

const ROOT = resolve(import.meta.dirname, "../..");

function lineCount(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").length - 1 : 0;
}

function runBatchCli(args: string[], killAfterLines?: { path: string; lines: number }): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((done, fail) => {
    // One process (node + the tsx loader), not the tsx CLI wrapper: killing the wrapper would
    // leave its node child running and writing.
    const child = spawn(process.execPath, ["--import", "tsx", "eval/cli/batch.ts", ...args], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
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
  }, 60_000);
});
