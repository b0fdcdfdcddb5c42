/**
 * Batches that manage their llama-server: a GGUF row without a baseUrl gets its server started
 * before its first run and stopped after it, against test/fixtures/fake-llama-server.mjs (it
 * answers every chat request with text and no tool call, so runs end fast, as failures).
 * Also `--dry-run` (the exact command line and the plan, nothing started) and `--model`.
 */
import { record as fixtureRecord } from "./fixtures.js";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadBatchConfig, planRows, runBatch } from "../../eval/batch.js";
import { dryRunLines, rowsForModels } from "../../eval/batch-plan.js";
import { batchMain } from "../../eval/cli/batch.js";
import { commandLine, missingPiece, serverPlan, serverSteps } from "../../eval/managed-server.js";
import { readRecords, type RunRecord } from "../../eval/run-record.js";
import { freePort, isAlive, loopback } from "../server/helpers.js";
import { cliArgs } from "../support/cli.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FAKE = fileURLToPath(new URL("../fixtures/fake-llama-server.mjs", import.meta.url));
const FAKE_ENV = ["FAKE_LLAMA_CRASH", "FAKE_LLAMA_DELAY_MS", "FAKE_LLAMA_CHAT_DELAY_MS"];
const savedServerEnv = process.env.FORGE_LLAMA_SERVER;

afterEach(() => {
  for (const key of FAKE_ENV) delete process.env[key];
  if (savedServerEnv === undefined) delete process.env.FORGE_LLAMA_SERVER;
  else process.env.FORGE_LLAMA_SERVER = savedServerEnv;
  vi.restoreAllMocks();
});

/** A temp dir with an (empty) model file, and a config of `rows` on one scenario. */
function setup(name: string, rows: (paths: { dir: string; gguf: string }) => object[]) {
  const dir = mkdtempSync(join(tmpdir(), "forge-managed-"));
  const gguf = join(dir, "Tiny-Q4_K_M.gguf");
  writeFileSync(gguf, "");
  const configPath = join(dir, `${name}.json`);
  writeFileSync(configPath, JSON.stringify({ name, seed: 3, scenarios: ["basic_2step"], rows: rows({ dir, gguf }) }));
  return { dir, gguf, configPath, out: join(dir, "out.jsonl") };
}

const managedRow = (gguf: string, port: number, ablation: string, extra: object = {}) => ({
  backend: "llamaserver", model: "Tiny-Q4_K_M", mode: "native", ablation, ggufPath: gguf, port, binary: FAKE, ...extra,
});

const pidIn = (lines: readonly string[]): number => {
  const match = lines.join("\n").match(/healthy at \S+ \(pid (\d+)\)/);
  if (!match) throw new Error(`no "healthy" line in:\n${lines.join("\n")}`);
  return Number(match[1]);
};

const record = (key: string): RunRecord =>
  fixtureRecord({ key, config: key.split("|")[0]!, backend: "llamaserver", model: "Tiny-Q4_K_M", elapsedMs: 1, inputTokens: 1, outputTokens: 1, timestamp: "2026-01-01T00:00:00Z" });

/** This process's child pids (Linux): a server the batch started is one of them from spawn() on, listening or not. */
const childPids = (): string[] =>
  readdirSync(`/proc/${process.pid}/task`).flatMap((task) => readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean));

async function printed(argv: string[]): Promise<string[]> {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
  expect(await batchMain(argv)).toBeUndefined();
  return lines;
}

describe("--dry-run", () => {
  it("prints each row's server and exact command line and the plan against --out, and starts and asks nothing", async () => {
    const port = await freePort();
    const ollama = await loopback((_req, res) => res.end("{}"));
    try {
      const { gguf, configPath, out } = setup("dry", ({ dir }) => [
        managedRow(join(dir, "Tiny-Q4_K_M.gguf"), port, "reforged", { ctxOverride: 4096, extraFlags: ["--reasoning-format", "auto", "--chat-template-kwargs", '{"enable_thinking":false}'] }),
        managedRow(join(dir, "Tiny-Q4_K_M.gguf"), port, "bare", { ctxOverride: 4096, extraFlags: ["--reasoning-format", "auto", "--chat-template-kwargs", '{"enable_thinking":false}'] }),
        { backend: "ollama", model: "qwen3:8b", baseUrl: ollama.url },
      ]);
      const name = `llamaserver:Tiny-Q4_K_M:native@reforged+gguf=${gguf}`;
      writeFileSync(out, `${JSON.stringify(record(`${name}|basic_2step|1`))}\n`);
      const command = `${FAKE} -m ${gguf} --host 127.0.0.1 --port ${port} -ngl 999 --jinja -c 4096 --reasoning-format auto --chat-template-kwargs '{"enable_thinking":false}'`;

      const before = childPids();
      const lines = await printed(["--config", configPath, "--runs", "2", "--out", out, "--dry-run"]);
      const started = childPids().filter((pid) => !before.includes(pid));

      expect(lines).toEqual([
        "dry run of batch dry: 3 row(s), 1 scenario(s), 2 run(s) each; nothing is started",
        name,
        `  server   managed, started before the row's first run; requests to http://127.0.0.1:${port}/v1`,
        `  command  ${command}`,
        `  runs     2 planned, 1 already in ${out}, 1 to run`,
        `llamaserver:Tiny-Q4_K_M:native@bare+gguf=${gguf}`,
        `  server   managed, the row above's, kept running (same command); requests to http://127.0.0.1:${port}/v1`,
        `  command  ${command}`,
        `  runs     2 planned, 0 already in ${out}, 2 to run`,
        `ollama:qwen3:8b@reforged+url=${ollama.url}`,
        `  server   not managed: ollama qwen3:8b at ${ollama.url}`,
        `  runs     2 planned, 0 already in ${out}, 2 to run`,
        `total: 6 planned, 1 already in ${out}, 5 to run`,
      ]);
      expect(ollama.requests).toEqual([]);
      expect(started).toEqual([]); // no server was spawned (seen at once, however slow it would be to listen) ...
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow(); // ... and none listens
      expect(readRecords(out)).toHaveLength(1);
    } finally {
      await ollama.close();
    }
  });

  it("names what would stop the real batch, and the example config shows forge's llama-server command", async () => {
    delete process.env.FORGE_LLAMA_SERVER;
    const out = join(mkdtempSync(join(tmpdir(), "forge-managed-")), "out.jsonl");
    const lines = dryRunLines({ config: loadBatchConfig("llamaserver-gguf"), runs: 1, out }, []);
    expect(lines).toContain("  command  llama-server -m /path/to/models/Qwen3-8B-Q4_K_M.gguf --host 127.0.0.1 --port 8080 -ngl 999 --jinja --reasoning-format auto");
    expect(lines).toContain("  problem  model file not found: /path/to/models/Qwen3-8B-Q4_K_M.gguf (the row's ggufPath): the batch would stop on this before any run");
    expect(lines.filter((l) => l.startsWith("  problem"))).toHaveLength(1); // the bare row reuses the same server
  });
});

describe("--model", () => {
  const models = () =>
    setup("models", () => [
      { backend: "ollama", model: "a" },
      { backend: "ollama", model: "a", ablation: "bare" },
      { backend: "ollama", model: "b" },
      { backend: "llamaserver", model: "local", ggufPath: "/m/Qwen3-8B-Q4_K_M.gguf", baseUrl: "http://127.0.0.1:9/v1" },
    ]);

  it("keeps the rows whose model or GGUF stem is one of the values", async () => {
    const { configPath, out } = models();
    const config = loadBatchConfig(configPath);
    expect(rowsForModels(config, ["Qwen3-8B-Q4_K_M", "a"]).map((r) => `${r.model}@${r.ablation}`)).toEqual(["a@reforged", "a@bare", "local@reforged"]);
    expect(rowsForModels(config, [])).toEqual(config.rows);
    const lines = await printed(["--config", configPath, "--runs", "1", "--out", out, "--dry-run", "--model", "b", "local"]);
    expect(lines.filter((l) => !l.startsWith(" ") && l.includes("@"))).toEqual(["ollama:b@reforged", "llamaserver:local@reforged+url=http://127.0.0.1:9/v1+gguf=/m/Qwen3-8B-Q4_K_M.gguf"]);
  });

  it("refuses a value no row has, naming the config's models", async () => {
    const { configPath } = models();
    await expect(batchMain(["--config", configPath, "--runs", "1", "--dry-run", "--model", "a", "qwen3", "c"])).rejects.toThrow(
      expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", message: 'Invalid --model: config "models" has no row for "qwen3", "c"; its models: a, b, local, Qwen3-8B-Q4_K_M' }),
    );
  });
});

describe("rows and their server", () => {
  it("the binary is the row's, else FORGE_LLAMA_SERVER, else llama-server on PATH; prompt mode has no --jinja", () => {
    const row = { backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf" };
    expect(serverPlan(row, {})!.launch.command).toBe("llama-server");
    expect(serverPlan(row, { FORGE_LLAMA_SERVER: "/opt/llama/llama-server" })!.launch.command).toBe("/opt/llama/llama-server");
    expect(serverPlan({ ...row, binary: "/usr/local/bin/ls2" }, { FORGE_LLAMA_SERVER: "/opt/llama/llama-server" })!.launch.command).toBe("/usr/local/bin/ls2");
    expect(commandLine(serverPlan({ ...row, mode: "prompt", port: 9001 }, {})!.launch)).toBe("llama-server -m /m/a.gguf --host 127.0.0.1 --port 9001 -ngl 999");
    expect(serverPlan({ ...row, baseUrl: "http://127.0.0.1:8080/v1" }, {})).toBeUndefined();
    expect(serverPlan({ backend: "ollama", model: "qwen3:8b" }, {})).toBeUndefined();
  });

  it("a missing model file or executable is one line naming it", () => {
    const { gguf } = setup("missing", () => []);
    const plan = (extra: object, env: NodeJS.ProcessEnv = {}) => serverPlan({ backend: "llamaserver", model: "m", ggufPath: gguf, ...extra }, env)!;
    expect(missingPiece(plan({ ggufPath: "/nowhere/x.gguf" }))).toBe("model file not found: /nowhere/x.gguf (the row's ggufPath)");
    expect(missingPiece(plan({}), { PATH: "/nowhere" })).toBe(`llama-server not found on PATH (set FORGE_LLAMA_SERVER or the row's "binary" to its path)`);
    expect(missingPiece(plan({ binary: "/nowhere/llama-server" }))).toBe(`server executable not found: /nowhere/llama-server (set FORGE_LLAMA_SERVER or the row's "binary" to its path)`);
    expect(missingPiece(plan({ binary: "fake-llama-server.mjs" }), { PATH: `/nowhere:${resolve(FAKE, "..")}` })).toBeUndefined();
  });

  it("consecutive rows with one command share a start; another command or an unmanaged row ends it", () => {
    const a = serverPlan({ backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf" }, {})!;
    const b = serverPlan({ backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf", mode: "prompt" }, {})!;
    const steps = serverSteps([
      { server: a, todo: 3 },
      { server: a, todo: 3 },
      { server: a, todo: 0 }, // all done: skipped, changes nothing
      { server: a, todo: 3 },
      { server: b, todo: 3 },
      { server: undefined, todo: 3 },
      { server: b, todo: 3 },
    ]);
    expect(steps).toEqual(["start", "reuse", undefined, "reuse", "start", undefined, "start"]);
  });

  it("server fields on a row whose server the batch does not start are refused at load", () => {
    const { configPath } = setup("fields", () => [{ backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf", baseUrl: "http://127.0.0.1:8080/v1", port: 9000 }]);
    expect(() => loadBatchConfig(configPath)).toThrow("Invalid rows[0].port: port configure a server the batch starts; it has a baseUrl, so its server is not started by the batch");
  });

  it("--queue is refused with managed rows (the workers bring their own servers)", async () => {
    const { configPath } = setup("queued", ({ gguf }) => [managedRow(gguf, 8080, "reforged")]);
    await expect(batchMain(["--config", configPath, "--runs", "1", "--queue", "redis://127.0.0.1:1"])).rejects.toThrow(/Invalid --queue: the workers run the queued rows against their own servers; 1 row\(s\)/);
  });
});

describe("a managed row run by the batch", () => {
  it("starts the server once for two rows with one command, runs both against it, and stops it before the next row", async () => {
    const port = await freePort();
    const { gguf, configPath, out } = setup("e2e", ({ gguf }) => [managedRow(gguf, port, "reforged"), managedRow(gguf, port, "bare"), { backend: "sim", model: "small-model" }]);
    const loaded = loadBatchConfig(configPath);
    const events: string[] = [];
    const result = await runBatch({ config: loaded, runs: 2, out, log: (l) => events.push(l), onRecord: (r) => events.push(`record ${r.config}`) });

    expect(result).toEqual({ ran: 6, skipped: 0 });
    const launch = planRows({ config: loaded, runs: 2 }, new Set())[0]!.server!.launch;
    expect(events.filter((e) => e.includes("Starting"))).toEqual([`[eval] Starting llamaserver: ${[launch.command, ...launch.args].join(" ")}`]);
    expect(events.filter((e) => e.includes("reusing"))).toHaveLength(1);
    const pid = pidIn(events);
    expect(isAlive(pid)).toBe(false);
    // Stopped after the managed rows, before the simulated row ran.
    const stoppedAt = events.indexOf(`[eval] stopped llamaserver (pid ${pid})`);
    expect(stoppedAt).toBeGreaterThan(events.findLastIndex((e) => e.startsWith("record llamaserver")));
    expect(stoppedAt).toBeLessThan(events.indexOf("record sim:small-model@reforged"));

    const records = readRecords(out);
    expect(records.map((r) => r.key)).toEqual([
      `llamaserver:Tiny-Q4_K_M:native@reforged+gguf=${gguf}|basic_2step|0`,
      `llamaserver:Tiny-Q4_K_M:native@reforged+gguf=${gguf}|basic_2step|1`,
      `llamaserver:Tiny-Q4_K_M:native@bare+gguf=${gguf}|basic_2step|0`,
      `llamaserver:Tiny-Q4_K_M:native@bare+gguf=${gguf}|basic_2step|1`,
      "sim:small-model@reforged|basic_2step|0",
      "sim:small-model@reforged|basic_2step|1",
    ]);
    // The fake answered every request (text, no tool call): the runs reached the model and failed on it.
    for (const r of records.slice(0, 4)) expect(r).toMatchObject({ correct: false, errorType: "ToolCallError", inputTokens: expect.any(Number) });
    expect(records[0]!.inputTokens).toBeGreaterThan(0);

    // Resumed: nothing left to do, so no server is started.
    const again: string[] = [];
    expect(await runBatch({ config: loaded, runs: 2, out, log: (l) => again.push(l) })).toEqual({ ran: 0, skipped: 6 });
    expect(again.filter((e) => e.includes("Starting"))).toEqual([]);
  });

  it("a server that does not start stops the batch with one line; nothing is recorded and nothing left running", async () => {
    process.env.FAKE_LLAMA_CRASH = "1";
    const port = await freePort();
    const { gguf, configPath, out } = setup("crash", ({ gguf }) => [managedRow(gguf, port, "reforged")]);
    const error = (await runBatch({ config: loadBatchConfig(configPath), runs: 1, out, log: () => undefined }).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: "FORGE_SERVER" });
    expect(error.message).toBe(
      `llamaserver:Tiny-Q4_K_M:native@reforged+gguf=${gguf}: llamaserver did not start: llamaserver exited with code 1 (signal none) before becoming healthy; ` +
        "its last output: llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within file bounds",
    );
    expect(readRecords(out)).toEqual([]);
  });

  it("a missing model file stops the batch before any run, even a row before it", async () => {
    const { configPath, out } = setup("nofile", () => [
      { backend: "sim", model: "small-model" },
      managedRow("/nowhere/Tiny-Q4_K_M.gguf", 8080, "reforged"),
    ]);
    await expect(runBatch({ config: loadBatchConfig(configPath), runs: 1, out, log: () => undefined })).rejects.toThrow(
      "llamaserver:Tiny-Q4_K_M:native@reforged+gguf=/nowhere/Tiny-Q4_K_M.gguf: model file not found: /nowhere/Tiny-Q4_K_M.gguf (the row's ggufPath)",
    );
    expect(readRecords(out)).toEqual([]);
  });

  it("an abort mid-row cancels the run in flight (not recorded) and stops the server", async () => {
    // Longer than the test's timeout: a batch that ends at all did not wait for the slow answer.
    process.env.FAKE_LLAMA_CHAT_DELAY_MS = "600000";
    const port = await freePort();
    const { configPath, out } = setup("abort", ({ gguf }) => [managedRow(gguf, port, "reforged")]);
    const controller = new AbortController();
    const lines: string[] = [];
    const result = await runBatch({
      config: loadBatchConfig(configPath), runs: 2, out, signal: controller.signal,
      log: (l) => {
        lines.push(l);
        if (l.includes("healthy at")) setTimeout(() => controller.abort(), 300); // the first chat request is waiting on the fake
      },
    });
    expect(result).toEqual({ ran: 0, skipped: 0 });
    expect(isAlive(pidIn(lines))).toBe(false);
    expect(readRecords(out)).toEqual([]);
  });
});

describe("npm run eval:batch with a managed row (child process)", () => {
  const env = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_") && !k.startsWith("FAKE_")));
  function cli(args: string[], extraEnv: Record<string, string>, onStderr?: (text: string, child: ReturnType<typeof spawn>) => void) {
    return new Promise<{ code: number | null; stderr: string }>((done, fail) => {
      const child = spawn(process.execPath, cliArgs("eval/cli/batch.ts", ...args), { cwd: ROOT, env: { ...env(), ...extraEnv, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => {
        stderr += d.toString();
        onStderr?.(stderr, child);
      });
      child.on("error", fail);
      child.on("exit", (code) => done({ code, stderr }));
    });
  }

  it("a server that does not start: exit 1, its one error line, no stack, nothing recorded", async () => {
    const port = await freePort();
    const { configPath, out } = setup("crash-cli", ({ gguf }) => [managedRow(gguf, port, "reforged")]);
    const r = await cli(["--config", configPath, "--runs", "1", "--out", out], { FAKE_LLAMA_CRASH: "1" });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n").filter((l) => !l.startsWith("[eval] "));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^forge-ts: llamaserver:Tiny-Q4_K_M:native@reforged\+gguf=\S+: llamaserver did not start: .*its last output: llama_model_load: error loading model.* \[FORGE_SERVER\]$/);
    expect(existsSync(out) ? readFileSync(out, "utf8") : "").toBe("");
  }, 120_000);

  it("Ctrl-C mid-row: exit 130, the server is gone, the run in flight is not recorded", async () => {
    const port = await freePort();
    const { configPath, out } = setup("sigint", ({ gguf }) => [managedRow(gguf, port, "reforged")]);
    let sent = false;
    const r = await cli(["--config", configPath, "--runs", "2", "--out", out], { FAKE_LLAMA_CHAT_DELAY_MS: "600000" }, (text, child) => {
      if (!sent && text.includes("healthy at")) {
        sent = true;
        setTimeout(() => child.kill("SIGINT"), 300);
      }
    });
    expect(r.code).toBe(130);
    expect(r.stderr).toContain("interrupted: 0 run(s) appended");
    expect(isAlive(pidIn(r.stderr.split("\n")))).toBe(false);
    expect(existsSync(out) ? readFileSync(out, "utf8") : "").toBe("");
  }, 120_000);
});
