import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { SlidingWindowCompact, TieredCompact } from "../../src/context/index.js";
import { UnsupportedModelError } from "../../src/core/errors.js";
import { BudgetMode } from "../../src/server/budget.js";
import { resetSamplingInfoLog } from "../../src/models/sampling.js";
import type { ServerManager } from "../../src/server/server-manager.js";
import { setupBackend } from "../../src/server/setup-backend.js";
import { freePort, isAlive, loopback, memoryLogger } from "./helpers.js";

const FAKE = fileURLToPath(new URL("../fixtures/fake-llama-server.mjs", import.meta.url));
const gpu32 = async () => ({ gpuName: "RTX 5090", vramTotalMb: 32607, vramTotalGb: 32607 / 1024, gpus: [{ name: "RTX 5090", vramTotalMb: 32607 }] });
const started: ServerManager[] = [];

afterEach(async () => {
  resetSamplingInfoLog();
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

function ollamaChatFake() {
  return loopback((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url === "/api/chat") {
      res.end(JSON.stringify({ model: "qwen3:8b", message: { role: "assistant", content: "hi" }, done: true, prompt_eval_count: 3, eval_count: 1 }));
    } else res.end(JSON.stringify({ done: true }));
  });
}

describe("setupBackend", () => {
  it("ollama + given client: sets num_ctx to the tier budget and builds a TieredCompact ContextManager", async () => {
    const fake = await ollamaChatFake();
    try {
      const logger = memoryLogger();
      const client = new OllamaClient({ model: "qwen3:8b", baseUrl: fake.url, think: false });
      const setup = await setupBackend({ backend: "ollama", model: "qwen3:8b", budgetMode: BudgetMode.FORGE_FULL, client, ollamaBaseUrl: fake.url, detectHardware: gpu32, logger });
      expect(setup.budgetTokens).toBe(32768);
      expect(setup.client).toBe(client);
      expect(await client.getContextLength()).toBe(32768);
      expect(setup.contextManager.budgetTokens).toBe(32768);
      expect(setup.contextManager.strategy).toBeInstanceOf(TieredCompact);
      await client.send([{ role: "user", content: "hi" }]);
      const chat = fake.requests.find((r) => r.url === "/api/chat")!;
      expect(JSON.parse(chat.body).options.num_ctx).toBe(32768);
      expect(logger.lines.some((l) => /setupBackend: ollama .* budget 32768 tokens \(mode forge-full\), num_ctx 32768/.test(l))).toBe(true);
      await setup.server.stop();
      expect(fake.requests.at(-1)).toMatchObject({ url: "/api/generate", body: JSON.stringify({ model: "qwen3:8b", keep_alive: 0 }) });
    } finally {
      await fake.close();
    }
  });

  it("ollama backend mode sends no num_ctx override", async () => {
    const client = new OllamaClient({ model: "qwen3:8b" });
    const setup = await setupBackend({ backend: "ollama", model: "qwen3:8b", client, detectHardware: async () => undefined, logger: memoryLogger() });
    expect(setup.budgetTokens).toBe(4096);
    expect(await client.getContextLength()).toBeUndefined();
  });

  it("ollama without a client builds one with recommended sampling", async () => {
    const fake = await ollamaChatFake();
    try {
      const setup = await setupBackend({
        backend: "ollama", model: "qwen3:8b", budgetMode: BudgetMode.MANUAL, manualTokens: 6000,
        recommendedSampling: true, sampling: { temperature: 0.3 }, ollamaBaseUrl: fake.url, logger: memoryLogger(),
      });
      expect(setup.client).toBeInstanceOf(OllamaClient);
      await setup.client.send([{ role: "user", content: "hi" }]);
      const options = JSON.parse(fake.requests.find((r) => r.url === "/api/chat")!.body).options;
      expect(options).toMatchObject({ num_ctx: 6000, temperature: 0.3, top_p: 0.95, top_k: 20, min_p: 0 });
    } finally {
      await fake.close();
    }
  });

  it("unknown model with recommendedSampling fails before anything is built", async () => {
    await expect(
      setupBackend({ backend: "ollama", model: "mystery:1b", budgetMode: BudgetMode.MANUAL, manualTokens: 1000, recommendedSampling: true, logger: memoryLogger() }),
    ).rejects.toBeInstanceOf(UnsupportedModelError);
  });

  it("llama-server: starts the managed process, reads /props, builds a LlamafileClient on it", async () => {
    const logger = memoryLogger();
    const setup = await setupBackend({
      backend: "llamaserver", ggufPath: "/m/Qwen3-8B-Q4_K_M.gguf", budgetMode: BudgetMode.FORGE_FULL, binary: FAKE, port: await freePort(),
      cacheTypeK: "q8_0", cacheTypeV: "q8_0", strategy: new SlidingWindowCompact({ keepRecent: 3 }), compactThreshold: 0.5, logger,
    });
    started.push(setup.server);
    expect(setup.budgetTokens).toBe(32768);
    expect(setup.client).toBeInstanceOf(LlamafileClient);
    expect((setup.client as LlamafileClient).baseUrl).toBe(`${setup.server.baseUrl}/v1`);
    expect(setup.contextManager.triggerTokens).toBe(16384);
    expect(setup.contextManager.strategy).toBeInstanceOf(SlidingWindowCompact);
    expect(logger.lines.some((l) => l.includes("strategy SlidingWindowCompact"))).toBe(true);
  });

  it.each([
    ["an unknown model with recommendedSampling", { ggufPath: "/m/mystery-model-Q4_K_M.gguf", recommendedSampling: true }, "FORGE_UNSUPPORTED_MODEL"],
    ["an unreadable /props", { ggufPath: "/m/a.gguf", budgetMode: BudgetMode.FORGE_FULL, env: "FAKE_LLAMA_BAD_PROPS" }, "FORGE_CONTEXT_DISCOVERY"],
  ])("llama-server: %s after the spawn stops the process it started", async (_label, extra, code) => {
    const { env, ...rest } = extra as { env?: string } & Record<string, unknown>;
    if (env) process.env[env] = "1";
    const logger = memoryLogger();
    try {
      const error = await setupBackend({ backend: "llamaserver", binary: FAKE, port: await freePort(), logger, ...rest }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code });
    } finally {
      if (env) delete process.env[env];
    }
    const healthy = logger.lines.find((l) => /healthy at .*\(pid \d+\)/.test(l));
    expect(healthy).toBeDefined();
    const pid = Number(/\(pid (\d+)\)/.exec(healthy!)![1]);
    expect(isAlive(pid)).toBe(false);
  });

  it("checks the model identity up front", async () => {
    await expect(setupBackend({ backend: "llamaserver", logger: memoryLogger() })).rejects.toThrow(/ggufPath/);
    await expect(setupBackend({ backend: "ollama", logger: memoryLogger() })).rejects.toThrow(/model/);
  });
});
