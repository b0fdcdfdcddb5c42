import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BudgetResolutionError, ContextDiscoveryError, InvalidArgumentError, ServerError } from "../../src/core/errors.js";
import { BudgetMode } from "../../src/server/budget.js";
import { ServerManager } from "../../src/server/server-manager.js";
import { freePort, isAlive, loopback, memoryLogger } from "./helpers.js";

const FAKE = fileURLToPath(new URL("../fixtures/fake-llama-server.mjs", import.meta.url));
const managers: ServerManager[] = [];
const envKeys = ["FAKE_LLAMA_CRASH", "FAKE_LLAMA_DELAY_MS", "FAKE_LLAMA_LOADING_POLLS", "FAKE_LLAMA_NEVER_HEALTHY", "FAKE_LLAMA_DEFAULT_CTX", "FAKE_LLAMA_BAD_PROPS", "FAKE_LLAMA_GRANDCHILD"];

afterEach(async () => {
  for (const key of envKeys) delete process.env[key];
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

async function manager(extra: { healthTimeoutMs?: number } = {}) {
  const logger = memoryLogger();
  const m = new ServerManager({ backend: "llamaserver", binary: FAKE, port: await freePort(), logger, ...extra });
  managers.push(m);
  return { m, logger };
}

async function props(m: ServerManager) {
  const res = await fetch(`${m.baseUrl}/props`);
  return (await res.json()) as { default_generation_settings: { n_ctx: number }; fake: { argv: string[]; flags: Record<string, unknown>; pid: number; grandchildPid?: number; loadingAnswers: number } };
}

describe("ServerManager (llama-server, fake executable)", () => {
  it("starts with the seed's flags, polls /health through a slow start, and reads n_ctx from /props", async () => {
    // Loading for three /health polls (counted, not timed: a loaded machine polls no faster).
    process.env.FAKE_LLAMA_LOADING_POLLS = "3";
    const { m } = await manager();
    await m.start({ ggufPath: "/models/Qwen3-8B-Q4_K_M.gguf", ctxOverride: 8192, cacheTypeK: "q8_0", cacheTypeV: "q8_0", nSlots: 2, extraFlags: ["--flash-attn"] });
    const p = await props(m);
    expect(p.fake.loadingAnswers).toBe(3); // polled through every 503, started on the first 200
    expect(p.fake.flags).toMatchObject({ model: "/models/Qwen3-8B-Q4_K_M.gguf", ctx: 8192, jinja: true, cacheTypeK: "q8_0", cacheTypeV: "q8_0", parallel: 2 });
    expect(p.fake.argv).toContain("--flash-attn");
    expect(await m.getServerContext()).toBe(4096);
    expect(m.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("prompt mode leaves out --jinja", async () => {
    const { m } = await manager();
    await m.start({ ggufPath: "/m/a.gguf", mode: "prompt" });
    expect((await props(m)).fake.flags.jinja).toBe(false);
  });

  it("reuses a running process with the same settings and restarts on different ones", async () => {
    const { m, logger } = await manager();
    await m.start({ ggufPath: "/m/a.gguf" });
    const first = m.pid!;
    await m.start({ ggufPath: "/m/a.gguf" });
    expect(m.pid).toBe(first);
    expect(logger.lines.some((l) => l.includes("Reusing"))).toBe(true);
    await m.start({ ggufPath: "/m/a.gguf", ctxOverride: 2048 });
    expect(m.pid).not.toBe(first);
    expect(isAlive(first)).toBe(false);
    expect(await m.getServerContext()).toBe(2048);
  });

  it("stop kills the whole process group", async () => {
    process.env.FAKE_LLAMA_GRANDCHILD = "1";
    const { m } = await manager();
    await m.start({ ggufPath: "/m/a.gguf" });
    const pid = m.pid!;
    const worker = (await props(m)).fake.grandchildPid as number;
    expect(isAlive(pid)).toBe(true);
    expect(isAlive(worker)).toBe(true);
    await m.stop();
    expect(m.pid).toBeUndefined();
    expect(isAlive(pid)).toBe(false);
    // SIGKILL delivery to the orphan is asynchronous: wait for it to be gone.
    await vi.waitFor(() => expect(isAlive(worker)).toBe(false), { timeout: 30_000, interval: 10 });
  });

  it("a crash on start raises ServerError carrying the stderr tail", async () => {
    process.env.FAKE_LLAMA_CRASH = "1";
    const { m } = await manager();
    const error = await m.start({ ggufPath: "/m/broken.gguf" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).message).toContain("exited with code 1");
    expect((error as ServerError).stderrTail).toContain("data is not within file bounds");
    expect((error as ServerError).message).toContain("data is not within file bounds");
  });

  it("a server that never gets healthy times out, is killed, and the error quotes stderr", async () => {
    process.env.FAKE_LLAMA_NEVER_HEALTHY = "1";
    // 2 s, not less: the timeout runs from the spawn, and on a loaded machine the fake server may
    // take most of a second to start and write the stderr line the error must quote.
    const { m } = await manager({ healthTimeoutMs: 2_000 });
    const error = await m.start({ ggufPath: "/m/slow.gguf" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).message).toMatch(/did not become healthy within 2000 ms/);
    expect((error as ServerError).stderrTail).toContain("loading model /m/slow.gguf");
    expect(m.pid).toBeUndefined();
  });

  it("a missing executable is a ServerError, not a hang", async () => {
    const m = new ServerManager({ backend: "llamaserver", binary: "/nonexistent/llama-server", port: await freePort(), logger: memoryLogger() });
    await expect(m.start({ ggufPath: "/m/a.gguf" })).rejects.toThrow(/Could not start \/nonexistent\/llama-server/);
  });

  it("forge-fast restarts with -c half of the auto-tuned window and re-reads /props", async () => {
    process.env.FAKE_LLAMA_DEFAULT_CTX = "40000";
    const { m, logger } = await manager();
    const budget = await m.startWithBudget({ ggufPath: "/m/a.gguf", budgetMode: BudgetMode.FORGE_FAST });
    expect(budget).toBe(20000);
    expect((await props(m)).fake.flags.ctx).toBe(20000);
    expect(logger.lines.some((l) => l.includes("restarting with -c 20000"))).toBe(true);
  });

  it("forge-fast with slots halves the whole pool", async () => {
    process.env.FAKE_LLAMA_DEFAULT_CTX = "40000";
    const { m } = await manager();
    expect(await m.startWithBudget({ ggufPath: "/m/a.gguf", nSlots: 2, budgetMode: BudgetMode.FORGE_FAST })).toBe(10000);
    expect((await props(m)).fake.flags.ctx).toBe(20000);
  });

  it("forge-full and backend read /props; manual starts with -c manualTokens", async () => {
    const { m } = await manager();
    expect(await m.startWithBudget({ ggufPath: "/m/a.gguf", budgetMode: BudgetMode.FORGE_FULL })).toBe(32768);
    expect(await m.resolveBudget(BudgetMode.BACKEND)).toBe(32768);
    expect(await m.resolveBudget(BudgetMode.FORGE_FAST)).toBe(16384);
    expect(await m.startWithBudget({ ggufPath: "/m/a.gguf", budgetMode: BudgetMode.MANUAL, manualTokens: 6000 })).toBe(6000);
    expect((await props(m)).fake.flags.ctx).toBe(6000);
    await expect(m.startWithBudget({ ggufPath: "/m/a.gguf", budgetMode: BudgetMode.MANUAL })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it("manual with slots: the budget is the per-slot window /props reports, not the whole -c pool", async () => {
    const { m } = await manager();
    expect(await m.startWithBudget({ ggufPath: "/m/a.gguf", nSlots: 2, budgetMode: BudgetMode.MANUAL, manualTokens: 6000 })).toBe(3000);
    expect((await props(m)).fake.flags).toMatchObject({ ctx: 6000, parallel: 2 });
  });

  it("refuses to start when another server already answers /health on the port (no adopting a stale server)", async () => {
    const stale = await loopback((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
    });
    try {
      const port = Number(new URL(stale.url).port);
      const logger = memoryLogger();
      const m = new ServerManager({ backend: "llamaserver", binary: FAKE, port, logger });
      managers.push(m);
      const error = await m.start({ ggufPath: "/m/a.gguf" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerError);
      expect((error as ServerError).message).toMatch(new RegExp(`another server holds port ${port}`));
      expect(m.pid).toBeUndefined();
      expect(logger.lines.some((l) => l.includes("Starting"))).toBe(false);
    } finally {
      await stale.close();
    }
  });

  it("an unparseable /props is a ContextDiscoveryError; an unreachable one a BudgetResolutionError", async () => {
    process.env.FAKE_LLAMA_BAD_PROPS = "1";
    const { m } = await manager();
    await m.start({ ggufPath: "/m/a.gguf" });
    await expect(m.resolveBudget(BudgetMode.FORGE_FULL)).rejects.toBeInstanceOf(ContextDiscoveryError);
    await m.stop();
    await expect(m.resolveBudget(BudgetMode.FORGE_FULL)).rejects.toBeInstanceOf(BudgetResolutionError);
  });

  it("llamafile backend passes --server and -m", async () => {
    const m = new ServerManager({ backend: "llamafile", binary: FAKE, port: await freePort(), logger: memoryLogger() });
    managers.push(m);
    await m.start({ ggufPath: "/m/a.gguf" });
    const p = await props(m);
    expect(p.fake.argv.slice(0, 4)).toEqual(["--server", "--nobrowser", "-m", "/m/a.gguf"]);
  });
});

describe("ServerManager (ollama)", () => {
  const gpu = (gb: number) => async () => ({ gpuName: "RTX", vramTotalMb: gb * 1024, vramTotalGb: gb, gpus: [{ name: "RTX", vramTotalMb: gb * 1024 }] });

  it("resolves the VRAM tiers for forge-full / forge-fast / backend and logs the choice", async () => {
    const logger = memoryLogger();
    const cases: [number, number][] = [[12, 4096], [24, 32768], [46.9, 32768], [48, 262144]];
    for (const [gb, tokens] of cases) {
      const m = new ServerManager({ backend: "ollama", detectHardware: gpu(gb), logger });
      expect(await m.resolveBudget(BudgetMode.FORGE_FULL)).toBe(tokens);
      expect(await m.resolveBudget(BudgetMode.FORGE_FAST)).toBe(tokens / 2);
      expect(await m.resolveBudget(BudgetMode.BACKEND)).toBe(tokens);
    }
    expect(logger.lines.some((l) => l.includes("Budget 32768 tokens (mode forge-full, Ollama tier for RTX, 24.0 GB VRAM)"))).toBe(true);
  });

  it("no GPU: forge-full fails loudly, backend is Ollama's 4096, manual passes through", async () => {
    const m = new ServerManager({ backend: "ollama", detectHardware: async () => undefined, logger: memoryLogger() });
    await expect(m.resolveBudget(BudgetMode.FORGE_FULL)).rejects.toBeInstanceOf(BudgetResolutionError);
    await expect(m.resolveBudget(BudgetMode.FORGE_FAST)).rejects.toBeInstanceOf(BudgetResolutionError);
    expect(await m.resolveBudget(BudgetMode.BACKEND)).toBe(4096);
    expect(await m.resolveBudget(BudgetMode.MANUAL, 3000)).toBe(3000);
  });

  it("rejects llama-server-only options", async () => {
    const m = new ServerManager({ backend: "ollama", logger: memoryLogger() });
    await expect(m.start({ model: "qwen3:8b", cacheTypeK: "q8_0" })).rejects.toThrow(/does not take cacheTypeK/);
  });

  it("stop unloads the model with keep_alive 0", async () => {
    const fake = await loopback((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ model: "qwen3:8b", done: true, done_reason: "unload" }));
    });
    try {
      const m = new ServerManager({ backend: "ollama", ollamaBaseUrl: fake.url, detectHardware: gpu(16), logger: memoryLogger() });
      expect(await m.startWithBudget({ model: "qwen3:8b", budgetMode: BudgetMode.FORGE_FULL })).toBe(4096);
      expect(m.baseUrl).toBe(fake.url);
      await m.stop();
      expect(fake.requests).toEqual([{ method: "POST", url: "/api/generate", body: JSON.stringify({ model: "qwen3:8b", keep_alive: 0 }) }]);
      await m.stop(); // nothing loaded any more: no second request
      expect(fake.requests).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it("a failed unload surfaces the HTTP error", async () => {
    const fake = await loopback((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"model \\"nope\\" not found"}');
    });
    try {
      const m = new ServerManager({ backend: "ollama", ollamaBaseUrl: fake.url, logger: memoryLogger() });
      await m.start({ model: "nope" });
      await expect(m.stop()).rejects.toThrow(/HTTP 404/);
    } finally {
      await fake.close();
    }
  });

  it("validates constructor options", () => {
    expect(() => new ServerManager({ backend: "vllm" as never })).toThrow(InvalidArgumentError);
    expect(() => new ServerManager({ backend: "llamaserver", port: 70000 })).toThrow(/port/);
    // port 0 would launch `--port 0` and then poll :0/health until healthTimeoutMs: fail at once.
    expect(() => new ServerManager({ backend: "llamaserver", port: 0 })).toThrow(expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", argument: "port" }));
  });
});
