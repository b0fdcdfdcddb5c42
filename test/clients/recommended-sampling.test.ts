import { afterEach, describe, expect, it } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { UnsupportedModelError } from "../../src/core/index.js";
import { clientSampling, getSamplingDefaults, resetSamplingInfoLog } from "../../src/models/sampling.js";
import { startFakeServer, type FakeServer } from "./support/fake-server.js";
import { ollamaChat, openaiCompletion } from "./support/wire.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  resetSamplingInfoLog();
});

const json = (body: unknown) => (_req: unknown, res: import("node:http").ServerResponse) => {
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
};

describe("recommendedSampling on the clients", () => {
  it("Ollama sends the card's values, with explicit fields winning one by one", async () => {
    server = await startFakeServer(json(ollamaChat({ content: "hi" })));
    const card = getSamplingDefaults("qwen3:8b")!;
    const client = new OllamaClient({ model: "qwen3:8b", baseUrl: server.url, recommendedSampling: true, temperature: 0.1, options: { top_k: 7 }, logger: () => undefined });
    await client.send([{ role: "user", content: "hi" }]);
    const options = server.requests[0]!.body.options;
    expect(options.temperature).toBe(0.1);
    expect(options.top_k).toBe(7);
    expect(options.top_p).toBe(card.topP);
  });

  it("llama-server sends the card's values for a GGUF stem", async () => {
    server = await startFakeServer(json(openaiCompletion({ content: "hi" })));
    const card = getSamplingDefaults("Qwen3-8B-Q4_K_M.gguf")!;
    const client = new LlamafileClient({ ggufPath: "/models/Qwen3-8B-Q4_K_M.gguf", baseUrl: `${server.url}/v1`, mode: "native", recommendedSampling: true, logger: () => undefined });
    await client.send([{ role: "user", content: "hi" }]);
    const body = server.requests[0]!.body;
    expect(body.temperature).toBe(card.temperature);
    expect(body.top_p).toBe(card.topP);
  });

  it("an unknown model with recommendedSampling fails at construction", () => {
    expect(() => new OllamaClient({ model: "my-private-finetune:1b", recommendedSampling: true })).toThrow(UnsupportedModelError);
  });

  it("off + known model: nothing is sent and one INFO line says the values exist", async () => {
    server = await startFakeServer(json(ollamaChat({ content: "hi" })));
    const lines: string[] = [];
    const client = new OllamaClient({ model: "qwen3:14b", baseUrl: server.url, logger: (level, m) => lines.push(`${level}:${m}`) });
    new OllamaClient({ model: "qwen3:14b", baseUrl: server.url, logger: (level, m) => lines.push(`${level}:${m}`) });
    await client.send([{ role: "user", content: "hi" }]);
    expect(server.requests[0]!.body.options).toBeUndefined();
    expect(lines.filter((l) => l.startsWith("info:") && l.includes("recommendedSampling"))).toHaveLength(1);
  });

  it("clientSampling keeps caller extras the card does not know", () => {
    expect(clientSampling("qwen3:8b", { recommendedSampling: true, extra: { seed: 3 } }).extra).toMatchObject({ seed: 3 });
    expect(clientSampling("anything", { temperature: 0.3 })).toEqual({ temperature: 0.3, extra: {} });
  });
});
