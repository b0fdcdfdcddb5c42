/**
 * The eval commands as a user meets them on a bad day: a dead backend, a typo, a missing file,
 * a config whose rows would collide, a results file cut mid-line. Each gets one clear line and
 * the documented exit code (0 ok, 1 failure, 2 usage).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REFUSED_URL } from "../support/refused-url.js";
import { loadBatchConfig, runConfigFor } from "../../eval/batch.js";
import { configName } from "../../eval/harness.js";
import { EVAL_GENERATION } from "../../eval/generation.js";
import { createProgress } from "../../eval/progress.js";
import { parseRecords, type RunRecord } from "../../eval/run-record.js";
import { cliArgs, type CliEntry } from "../support/cli.js";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
async function cli(script: CliEntry, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, cliArgs(script, ...args), { env: { ...env, NO_COLOR: "1" } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const tmp = () => mkdtempSync(join(tmpdir(), "forge-eval-cli-"));

describe("eval against a dead backend", () => {
  it("says it is unreachable once and exits 1 instead of failing every run", async () => {
    const url = REFUSED_URL;
    const r = await cli("eval/cli/run.ts", ["--backend", "ollama", "--model", "qwen3:8b", "--base-url", url, "--runs", "2"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n").at(-1)).toBe(`backend ollama qwen3:8b at ${url} is unreachable: No usable HTTP answer from ${url}/api/tags: connect ECONNREFUSED ${url.slice(7)}`);
    expect(r.stdout).not.toContain("FAIL");
  }, 300_000);

  it("--probe says unreachable, not 'context length not reported'", async () => {
    const url = REFUSED_URL;
    const r = await cli("eval/cli/run.ts", ["--backend", "llamaserver", "--model", "local", "--base-url", `${url}/v1`, "--probe"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("is unreachable");
    expect(r.stdout).not.toContain("not reported");
  }, 300_000);

  it("eval:batch stops at the first row whose backend is dead (exit 1)", async () => {
    const dir = tmp();
    const url = REFUSED_URL;
    writeFileSync(join(dir, "cfg.json"), JSON.stringify({ name: "dead", scenarios: ["basic_2step"], rows: [{ backend: "ollama", model: "qwen3:8b", baseUrl: url }] }));
    const r = await cli("eval/cli/batch.ts", ["--config", join(dir, "cfg.json"), "--runs", "1", "--out", join(dir, "out.jsonl")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/forge-ts: ollama:qwen3:8b@reforged\+url=http:\/\/127\.0\.0\.1:\d+: backend ollama qwen3:8b at .* is unreachable.* \[FORGE_BACKEND\]/);
  }, 300_000);
});

describe("usage errors exit 2 with the valid choices", () => {
  it.each([
    ["eval/cli/run.ts", ["--ablation", "nosuch"], /unknown preset "nosuch"; use one of reforged, .*bare/],
    ["eval/cli/run.ts", ["--timeout", "0"], /--timeout: must be a positive integer, got 0/],
    ["eval/cli/run.ts", ["--frobnicate"], /unknown flag/],
    ["eval/cli/batch.ts", ["--config", "nosuch-config"], /no batch config "nosuch-config"/],
    ["eval/cli/report.ts", ["missing.jsonl"], /missing\.jsonl does not exist/],
    ["eval/bench/run.ts", ["nosuch"], /unknown bench suite "nosuch"; use chaos, compaction, durability, partitions, proxy, queue, rescue, runner, snapshot/],
  ] as const)("%s %j", async (script, args, message) => {
    const r = await cli(script, [...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  }, 300_000);

  it("--help texts document --progress, --timeout, --probe and the exit codes", async () => {
    expect((await cli("eval/cli/batch.ts", ["--help"])).stdout).toMatch(/--progress[\s\S]*--timeout[\s\S]*Exit codes/);
    expect((await cli("eval/cli/run.ts", ["--help"])).stdout).toMatch(/--probe[\s\S]*--timeout[\s\S]*Exit codes/);
  }, 300_000);
});

describe("batch config keys", () => {
  const row = { backend: "ollama", model: "qwen3:8b", ablation: "reforged" };
  it("rows that differ only in stream, think, baseUrl or ggufPath are different configs", () => {
    const dir = tmp();
    const rows = [row, { ...row, stream: true }, { ...row, think: false }, { ...row, baseUrl: "http://10.0.0.2:11434" }, { backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf" }, { backend: "llamaserver", model: "m", ggufPath: "/m/b.gguf" }];
    writeFileSync(join(dir, "cfg.json"), JSON.stringify({ name: "keys", rows }));
    const config = loadBatchConfig(join(dir, "cfg.json"));
    const names = config.rows.map((r) => configName(runConfigFor(r, 1)));
    expect(names).toEqual([
      "ollama:qwen3:8b@reforged",
      "ollama:qwen3:8b@reforged+stream",
      "ollama:qwen3:8b@reforged+think=false",
      "ollama:qwen3:8b@reforged+url=http://10.0.0.2:11434",
      "llamaserver:m@reforged+gguf=/m/a.gguf",
      "llamaserver:m@reforged+gguf=/m/b.gguf",
    ]);
  });

  it("two rows with one name are an error naming both", () => {
    const dir = tmp();
    writeFileSync(join(dir, "cfg.json"), JSON.stringify({ name: "dup", rows: [row, { ...row, stream: true }, { ...row, stream: false }] }));
    expect(() => loadBatchConfig(join(dir, "cfg.json"))).toThrow(/rows 0 and 2 are the same config \(ollama:qwen3:8b@reforged\)/);
  });
});

describe("a results file cut mid-line", () => {
  const record = (runIndex: number): RunRecord => ({
    key: `sim:small-model@reforged|basic_2step|${runIndex}`, config: "sim:small-model@reforged", backend: "sim", model: "small-model",
    ablation: "reforged", scenario: "basic_2step", tags: ["plumbing"], runIndex, seed: 1, generation: EVAL_GENERATION, completed: true, correct: true, iterations: 2,
    idealIterations: 2, wastedCalls: 0, elapsedMs: 1, compactions: 0, compactionPhases: [], streamRetries: 0, inputTokens: 1, outputTokens: 1,
    retryNudges: 0, stepNudges: 0, prereqNudges: 0, rescues: 0, toolErrors: 0, reasoningMessages: 0, timestamp: "2026-01-01T00:00:00Z",
  });
  const text = `${JSON.stringify(record(0))}\n${JSON.stringify(record(1)).slice(0, 80)}`;

  it("parseRecords skips an incomplete last line (and says so); a bad middle line is still an error", () => {
    const notes: string[] = [];
    expect(parseRecords(text, "r.jsonl", (m) => notes.push(m)).map((r) => r.runIndex)).toEqual([0]);
    expect(notes).toEqual(["r.jsonl:2: skipped an incomplete last line (80 chars) left by an interrupted run"]);
    expect(() => parseRecords(`${JSON.stringify(record(1)).slice(0, 80)}\n${JSON.stringify(record(0))}\n`, "r.jsonl", () => {})).toThrow(/r\.jsonl:1 is not JSON/);
  });

  it("eval:batch resumes over it (redoing that run) and eval:report reads it", async () => {
    const dir = tmp();
    const out = join(dir, "out.jsonl");
    writeFileSync(out, text);
    const report = await cli("eval/cli/report.ts", [out, "--list-only"]);
    expect(report.code).toBe(0);
    expect(report.stderr).toContain("skipped an incomplete last line");
    writeFileSync(join(dir, "cfg.json"), JSON.stringify({ name: "cut", seed: 1, scenarios: ["basic_2step"], rows: [{ backend: "sim", model: "small-model", ablation: "reforged" }] }));
    const batch = await cli("eval/cli/batch.ts", ["--config", join(dir, "cfg.json"), "--runs", "3", "--out", out]);
    expect(batch.code).toBe(0);
    expect(batch.stdout).toContain("2 run(s) appended");
    const lines = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as RunRecord);
    expect(lines.map((r) => r.runIndex).sort()).toEqual([0, 1, 2]);
  }, 300_000);
});

describe("progress lines", () => {
  it("a failed run shows its error message, not just the class", () => {
    let written = "";
    const p = createProgress({ total: 1, tty: false, out: { write: (s: string) => ((written += s), true), isTTY: false } as unknown as NodeJS.WriteStream });
    p.tick({ config: "c", scenario: "s", runIndex: 0, correct: false, iterations: 0, errorType: "BackendError", errorMessage: "No usable HTTP answer from http://x/api/chat: connect ECONNREFUSED" } as RunRecord);
    expect(written).toBe("[1/1] c s#0 FAIL BackendError: No usable HTTP answer from http://x/api/chat: connect ECONNREFUSED it=0 (pass 0%)\n");
  });
});
