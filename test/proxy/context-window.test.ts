/**
 * The backend's window through the proxy, with the official `openai` and `@anthropic-ai/sdk`
 * clients: a prompt over the window gets each API's own context-length error before any backend
 * is asked; under it, Ollama is sent a num_ctx that fits (Ollama /api/show and /api/chat,
 * llama-server /props, /apply-template and /tokenize, all loopback fakes).
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { ollamaChat, openaiCompletion } from "../clients/support/wire.js";
import { ask, chat, fakeBackend, fleetConfig, fleetProxy } from "./fleet/support/fleet-rig.js";
import { proxyRig, WEATHER_SCHEMA, type Rig } from "./support/harness.js";

const serve = useFakeServers();
beforeEach(() => {
  // Discovery problems are logged once; the tests that care read the spy.
  vi.spyOn(console, "warn").mockImplementation(() => {});
});

/** A user message of `chars` characters: chars/4 + 4 tokens by the proxy's estimate. */
const long = (chars: number) => "x".repeat(chars);
const openai = (rig: Pick<Rig, "url">) => new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
const anthropic = (rig: Pick<Rig, "url">) => new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0 });

const openaiError = (n: number, m: number) => ({
  message: `This model's maximum context length is ${m} tokens. However, your messages resulted in ${n} tokens. Please reduce the length of the messages.`,
  type: "invalid_request_error",
  param: "messages",
  code: "context_length_exceeded",
});
const anthropicError = (n: number, m: number) => ({ type: "error", error: { type: "invalid_request_error", message: `prompt is too long: ${n} tokens > ${m} maximum` } });

async function rejection(promise: Promise<unknown>): Promise<{ status: number; error: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status!, error: error.error };
    if (error instanceof Anthropic.APIError) return { status: error.status!, error: error.error };
    throw error;
  }
  throw new Error("the request succeeded");
}

describe.each([false, true])("a prompt over an Ollama model's window (stream %s)", (stream) => {
  it("is OpenAI's 400 context_length_exceeded, and the backend is never asked to chat", async () => {
    const rig = await proxyRig([], { contextLength: 8192 });
    // 40,000 chars: 10,000 + 4 tokens, over the 8,192 /api/show reports.
    const sent = rejection(openai(rig).chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: long(40_000) }], stream }));
    expect(await sent).toEqual({ status: 400, error: openaiError(10_004, 8192) });
    expect(rig.chats()).toHaveLength(0);
    expect(rig.backend.to("/api/show")).toHaveLength(1);
  });

  it("is the Responses API's 400 context_length_exceeded (param input), and the backend is never asked", async () => {
    const rig = await proxyRig([], { contextLength: 8192 });
    const sent = rejection(openai(rig).responses.create({ model: "qwen3:8b", input: long(40_000), stream }));
    expect(await sent).toEqual({
      status: 400,
      error: {
        message: "Your input exceeds the context window of this model (10004 tokens > 8192). Please adjust your input and try again.",
        type: "invalid_request_error",
        param: "input",
        code: "context_length_exceeded",
      },
    });
    expect(rig.chats()).toHaveLength(0);
  });

  it("is Anthropic's 400 'prompt is too long', tools counted in", async () => {
    const rig = await proxyRig([], { contextLength: 8192 });
    const tools = [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_SCHEMA }];
    const sent = rejection(anthropic(rig).messages.create({ model: "qwen3:8b", max_tokens: 1024, messages: [{ role: "user", content: long(40_000) }], tools, stream }));
    const { status, error } = await sent;
    expect(status).toBe(400);
    const n = Number(/prompt is too long: (\d+) tokens/.exec(JSON.stringify(error))?.[1]);
    expect(n).toBeGreaterThan(10_004);
    expect(error).toEqual(anthropicError(n, 8192));
    expect(rig.chats()).toHaveLength(0);
  });
});

describe("Ollama's num_ctx", () => {
  it("fits each request (prompt + max_tokens up the ladder, capped at the model's maximum) and never goes down", async () => {
    const rig = await proxyRig(() => ({ content: "ok" }), { contextLength: 40_960 });
    const client = openai(rig);
    const send = (chars: number, max?: number) => client.chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: long(chars) }], ...(max ? { max_tokens: max } : {}) });
    await send(400, 100); // 104 + 100 → 4096
    await send(20_000, 3_000); // 5,004 + 3,000 → 8192
    await send(400); // small again: stays 8192 (no reload)
    await send(130_000, 1_000); // 32,504 + 1,000 → 65536 → the model's 40,960
    expect(rig.chats().map((r) => r.body.options.num_ctx)).toEqual([4096, 8192, 8192, 40_960]);
    expect(rig.chats()[0]!.body.options.num_predict).toBe(100);
    expect(rig.backend.to("/api/show")).toHaveLength(1);
  });

  it("is left alone when the caller sets it (and then is the window), or the client has its own numCtx", async () => {
    const rig = await proxyRig(() => ({ content: "ok" }));
    const client = openai(rig);
    await client.chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }], options: { num_ctx: 2048 } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(rig.chats()[0]!.body.options).toEqual({ num_ctx: 2048 });
    const over = rejection(client.chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: long(10_000) }], options: { num_ctx: 2048 } } as OpenAI.ChatCompletionCreateParamsNonStreaming));
    expect(await over).toEqual({ status: 400, error: openaiError(2504, 2048) });

    const fixed = await proxyRig(() => ({ content: "ok" }), { client: (url) => new OllamaClient({ model: "qwen3:8b", baseUrl: url, numCtx: 16_384, logger: () => {} }) });
    await openai(fixed).chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] });
    expect(fixed.chats()[0]!.body.options).toEqual({ num_ctx: 16_384 });
    expect(await rejection(openai(fixed).chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: long(80_000) }] }))).toEqual({
      status: 400,
      error: openaiError(20_004, 16_384),
    });
    expect(fixed.backend.to("/api/show")).toHaveLength(0);
  });

  it("the proxy's contextLength replaces discovery: no /api/show, and num_ctx is capped at it", async () => {
    const rig = await proxyRig(() => ({ content: "ok" }), { proxy: { contextLength: 6000 } });
    await openai(rig).chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: long(16_000) }] });
    expect(rig.chats()[0]!.body.options.num_ctx).toBe(6000);
    expect(await rejection(openai(rig).chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: long(24_000) }] }))).toEqual({
      status: 400,
      error: openaiError(6004, 6000),
    });
    expect(rig.backend.to("/api/show")).toHaveLength(0);
  });

  it("a model whose window cannot be learned is logged once, with what the proxy does instead, and still served", async () => {
    const backend = await serve((req, res) => {
      if (req.path === "/api/show") return sendJson(res, 404, { error: "model 'qwen3:8b' not found" });
      return sendJson(res, 200, ollamaChat({ content: "ok" }, "qwen3:8b"));
    });
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url, think: false }) });
    const post = () => proxy.fetch(new Request("http://proxy/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", messages: ask("hi") }) }));
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(200);
    expect(backend.to("/api/show")).toHaveLength(1);
    expect(backend.to("/api/chat").map((r) => r.body.options.num_ctx)).toEqual([4096, 4096]);
    const warnings = vi.mocked(console.warn).mock.calls.map(([line]) => String(line));
    expect(warnings).toEqual([expect.stringMatching(/cannot learn the context length of backend "backend" model "qwen3:8b" \(HTTP 404.*not checked against a window, and num_ctx is sized without a cap/)]);
  });
});

describe("llama-server's window (/props n_ctx)", () => {
  /** llama-server with a per-slot window of 4096 and a whitespace tokenizer. */
  async function llamaServer() {
    return serve((req, res) => {
      if (req.path === "/props") return sendJson(res, 200, { default_generation_settings: { n_ctx: 4096 } });
      if (req.path === "/apply-template") return sendJson(res, 200, { prompt: req.body.messages.map((m: { content: string }) => m.content).join(" ") });
      if (req.path === "/tokenize") return sendJson(res, 200, { tokens: String(req.body.content).split(/\s+/).filter(Boolean) });
      return sendJson(res, 200, openaiCompletion({ content: "ok" }, "qwen3-8b"));
    });
  }
  const rigOn = async (url: string) => {
    const proxy = createProxy({ client: new LlamafileClient({ model: "qwen3-8b", baseUrl: `${url}/v1`, mode: "native", logger: () => {} }) });
    return { proxy, url: (await proxy.listen({ port: 0, host: "127.0.0.1" })).url };
  };

  it("far over: refused on the estimate, without asking the tokenizer; near: the backend's tokenizer decides", async () => {
    const server = await llamaServer();
    const rig = await rigOn(server.url);
    try {
      const client = anthropic(rig);
      const send = (content: string) => client.messages.create({ model: "qwen3-8b", max_tokens: 256, messages: [{ role: "user", content }] });
      expect(await rejection(send(long(40_000)))).toEqual({ status: 400, error: anthropicError(10_004, 4096) });
      expect(server.to("/tokenize")).toHaveLength(0);
      // 14,000 chars: 3,504 by the estimate, but 7,000 words to this tokenizer.
      expect(await rejection(send("a ".repeat(7000)))).toEqual({ status: 400, error: anthropicError(7000, 4096) });
      // 16,000 chars in one word: 4,004 by the estimate (over), 1 token to the tokenizer: served.
      expect((await send(long(16_000))).content).toEqual([{ type: "text", text: "ok" }]);
      expect(server.to("/v1/chat/completions")).toHaveLength(1);
      expect(server.to("/props")).toHaveLength(1);
    } finally {
      await rig.proxy.close();
    }
  });
});

describe("a fleet whose backends' windows differ", () => {
  it("sends a prompt only to the backends it fits; one that fits none is the 400 naming the largest window", async () => {
    const small = await fakeBackend("small");
    const big = await fakeBackend("big");
    small.contextLength = 8192;
    big.contextLength = 32_768;
    const { url } = await fleetProxy(fleetConfig([small, big]));
    for (let i = 0; i < 3; i++) expect((await chat(url, { messages: ask(long(48_000)) })).status).toBe(200);
    expect([small.chats.length, big.chats.length]).toEqual([0, 3]);
    expect(big.chats.map((r) => r.body.options.num_ctx)).toEqual([16_384, 16_384, 16_384]);
    const over = await chat(url, { messages: ask(long(160_000)) });
    expect([over.status, await over.json()]).toEqual([400, { error: openaiError(40_004, 32_768) }]);
    expect([small.chats.length, big.chats.length]).toEqual([0, 3]);
    // Small prompts go to both, each sized for its own window.
    for (let i = 0; i < 4; i++) expect((await chat(url, { messages: ask("hi") })).status).toBe(200);
    expect(small.chats.map((r) => r.body.options.num_ctx)).toEqual([4096, 4096]);
  });

  it("a backend's contextLength in the config replaces what it reports", async () => {
    const gpu = await fakeBackend("gpu");
    const config = fleetConfig([gpu]);
    config.backends.gpu!.contextLength = 5000;
    const { url } = await fleetProxy(config);
    const over = await chat(url, { messages: ask(long(24_000)) });
    expect([over.status, await over.json()]).toEqual([400, { error: openaiError(6004, 5000) }]);
    expect(gpu.windowQuestions).toBe(0);
  });
});
