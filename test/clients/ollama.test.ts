import { describe, expect, it } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import { BackendError, ContextDiscoveryError } from "../../src/core/errors.js";
import { collect, MESSAGES, TOOLS } from "./contract.js";
import { sendJson, sendNdjson, useFakeServers, type FakeHandler } from "./support/fake-server.js";
import { ollamaChat, ollamaStreamLines, type ModelReply } from "./support/wire.js";

const WIRE_TOOLS = TOOLS.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
const REFUSAL = { error: '"llama3.1:8b" does not support thinking' };

const serve = useFakeServers();
const replying = (reply: ModelReply): FakeHandler => (req, res) =>
  req.body.stream ? sendNdjson(res, ollamaStreamLines(reply)) : sendJson(res, 200, ollamaChat(reply));
/** Answers 400 to any request carrying think, like an Ollama model without thinking support. */
const refusingThink = (reply: ModelReply): FakeHandler => (req, res, n) =>
  req.body.think ? sendJson(res, 400, REFUSAL) : replying(reply)(req, res, n);

function logs() {
  const lines: [string, string][] = [];
  return { lines, logger: (level: "info" | "warn", msg: string) => void lines.push([level, msg]) };
}

describe("OllamaClient requests", () => {
  it("posts the exact /api/chat body: tools, options with temperature and num_ctx, no think for non-thinking models", async () => {
    const s = await serve(replying({ content: "hi" }));
    const client = new OllamaClient({ model: "llama3.1:8b", baseUrl: s.url, temperature: 0.2, options: { top_k: 20, min_p: 0.05 }, numCtx: 8192, logger: () => {} });
    await client.send(MESSAGES, TOOLS);
    expect(s.requests[0]!.path).toBe("/api/chat");
    expect(s.requests[0]!.body).toEqual({
      model: "llama3.1:8b",
      messages: MESSAGES,
      stream: false,
      tools: WIRE_TOOLS,
      options: { top_k: 20, min_p: 0.05, temperature: 0.2, num_ctx: 8192 },
    });
  });

  it("sends num_ctx on every request once setNumCtx is called, and reports it as the context length", async () => {
    const s = await serve(replying({ content: "hi" }));
    const client = new OllamaClient({ model: "llama3.1:8b", baseUrl: s.url, logger: () => {} });
    expect(await client.getContextLength()).toBeUndefined();
    await client.send(MESSAGES);
    expect(s.requests[0]!.body.options).toBeUndefined();
    client.setNumCtx(4096);
    await client.send(MESSAGES);
    await collect(client.sendStream(MESSAGES, TOOLS));
    await client.send(MESSAGES);
    expect(s.requests.slice(1).map((r) => r.body.options)).toEqual([{ num_ctx: 4096 }, { num_ctx: 4096 }, { num_ctx: 4096 }]);
    expect(await client.getContextLength()).toBe(4096);
    expect(() => client.setNumCtx(-1)).toThrow(/numCtx/);
  });

  it("captures usage from prompt_eval_count / eval_count", async () => {
    const s = await serve(replying({ content: "hi", usage: { input: 123, output: 45 } }));
    const client = new OllamaClient({ model: "m", baseUrl: s.url, logger: () => {} });
    const response = await client.send(MESSAGES);
    expect(response.usage).toEqual({ inputTokens: 123, outputTokens: 45 });
    expect(client.lastUsage).toEqual({ inputTokens: 123, outputTokens: 45 });
  });
});

describe("OllamaClient think", () => {
  it("auto: thinking family sends think=true and captures message.thinking (send and stream)", async () => {
    const s = await serve(replying({ reasoning: "Paris is in France.", toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
    const { lines, logger } = logs();
    const client = new OllamaClient({ model: "qwen3:8b", baseUrl: s.url, logger });
    const sent = await client.send(MESSAGES, TOOLS);
    expect(s.requests[0]!.body.think).toBe(true);
    expect(sent).toEqual({
      type: "tool_calls",
      toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }],
      reasoning: "Paris is in France.",
      usage: { inputTokens: 11, outputTokens: 7 },
    });
    const chunks = await collect(client.sendStream(MESSAGES, TOOLS));
    expect(chunks.filter((c) => c.type === "text_delta" && c.channel === "reasoning").length).toBeGreaterThan(0);
    expect(chunks.at(-1)).toEqual({ type: "final", response: sent });
    // (the model is also known to the sampling table: its one-time INFO line is not about think)
    expect(lines.filter(([, m]) => m.includes("think"))).toEqual([["info", expect.stringContaining("sending think=true")]]);
  });

  it("auto: a 400 'does not support thinking' falls back once, logs it, and never sends think again", async () => {
    const s = await serve(refusingThink({ content: "hello" }));
    const { lines, logger } = logs();
    const client = new OllamaClient({ model: "qwen3-coder:30b", baseUrl: s.url, logger });
    expect(await client.send(MESSAGES)).toMatchObject({ type: "text", content: "hello" });
    await collect(client.sendStream(MESSAGES));
    expect(s.requests.map((r) => r.body.think)).toEqual([true, undefined, undefined]);
    expect(lines.filter(([level]) => level === "warn")).toEqual([["warn", expect.stringContaining("does not support thinking")]]);
  });

  it("auto fallback works when the first request is a stream", async () => {
    const s = await serve(refusingThink({ content: "hello" }));
    const client = new OllamaClient({ model: "deepseek-r1:7b", baseUrl: s.url, logger: () => {} });
    const chunks = await collect(client.sendStream(MESSAGES));
    expect(chunks.at(-1)).toMatchObject({ type: "final", response: { type: "text", content: "hello" } });
    expect(s.requests).toHaveLength(2);
  });

  it("forced think=true on a model that refuses → ThinkingNotSupportedError, no second request", async () => {
    const s = await serve(refusingThink({ content: "hello" }));
    const client = new OllamaClient({ model: "llama3.1:8b", baseUrl: s.url, think: true, logger: () => {} });
    await expect(client.send(MESSAGES)).rejects.toMatchObject({
      name: "ThinkingNotSupportedError",
      code: "FORGE_THINKING_NOT_SUPPORTED",
      model: "llama3.1:8b",
      statusCode: 400,
    });
    expect(s.requests).toHaveLength(1);
  });

  it("think=false never sends think and discards reasoning (field, tags and stream deltas)", async () => {
    const s = await serve(replying({ reasoning: "secret", content: "<think>also secret</think>Answer" }));
    const client = new OllamaClient({ model: "qwen3:8b", baseUrl: s.url, think: false, logger: () => {} });
    const sent = await client.send(MESSAGES);
    expect(s.requests[0]!.body).not.toHaveProperty("think");
    expect(sent).toEqual({ type: "text", content: "Answer", usage: { inputTokens: 11, outputTokens: 7 } });
    const chunks = await collect(client.sendStream(MESSAGES));
    expect(chunks.some((c) => c.type === "text_delta" && c.channel === "reasoning")).toBe(false);
    expect(chunks.at(-1)).toEqual({ type: "final", response: sent });
  });

  it("other 400s are plain BackendErrors, even in auto mode", async () => {
    const s = await serve((_req, res) => sendJson(res, 400, { error: "invalid message format" }));
    const client = new OllamaClient({ model: "qwen3:8b", baseUrl: s.url, logger: () => {} });
    await expect(client.send(MESSAGES)).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: 400 });
    expect(s.requests).toHaveLength(1);
  });
});

describe("OllamaClient responses", () => {
  it("rescues a call the model wrote into content instead of native tool_calls", async () => {
    const s = await serve(replying({ content: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' }));
    const client = new OllamaClient({ model: "m", baseUrl: s.url, logger: () => {} });
    expect(await client.send(MESSAGES, TOOLS)).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] });
  });

  it("decodes string arguments once and keeps malformed ones as the raw string", async () => {
    const s = await serve(replying({ toolCalls: [{ name: "get_weather", args: '{"city":"Oslo"}' }, { name: "answer", args: '{"text":' }] }));
    const client = new OllamaClient({ model: "m", baseUrl: s.url, logger: () => {} });
    const response = await client.send(MESSAGES, TOOLS);
    expect(response).toMatchObject({ toolCalls: [{ tool: "get_weather", args: { city: "Oslo" } }, { tool: "answer", args: '{"text":' }] });
  });

  it("streams parallel tool calls as indexed TOOL_CALL_DELTA chunks", async () => {
    const calls = [{ name: "get_weather", args: { city: "Paris" } }, { name: "get_weather", args: { city: "Rome" } }];
    const s = await serve(replying({ toolCalls: calls }));
    const chunks = await collect(new OllamaClient({ model: "m", baseUrl: s.url, logger: () => {} }).sendStream(MESSAGES, TOOLS));
    expect(chunks.filter((c) => c.type === "tool_call_delta")).toEqual([
      { type: "tool_call_delta", index: 0, name: "get_weather", content: '{"city":"Paris"}' },
      { type: "tool_call_delta", index: 1, name: "get_weather", content: '{"city":"Rome"}' },
    ]);
  });

  it("an error line mid-stream is a BackendError, not a stream retry", async () => {
    const s = await serve((_req, res) => sendNdjson(res, [ollamaStreamLines({ content: "Hi" })[0], { error: "model crashed" }]));
    const client = new OllamaClient({ model: "m", baseUrl: s.url, logger: () => {} });
    await expect(collect(client.sendStream(MESSAGES))).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: 500 });
    expect(client.streamRetries).toBe(0);
  });
});

describe("OllamaClient options", () => {
  it.each([
    [{}, "model"],
    [{ model: "m", baseUrl: "localhost:11434" }, "baseUrl"],
    [{ model: "m", timeoutMs: 0 }, "timeoutMs"],
    [{ model: "m", think: "yes" }, "think"],
    [{ model: "m", temperature: 9 }, "temperature"],
    [{ model: "m", options: { num_ctx: 4 } }, "options.num_ctx"],
    [{ model: "m", logger: "console" }, "logger"],
  ])("rejects %j naming %s", (options, field) => {
    expect(() => new OllamaClient(options as never)).toThrow(expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", argument: field }));
  });
});

describe("OllamaClient modelContextLength", () => {
  const show = (info: Record<string, unknown>): FakeHandler => (_req, res) => sendJson(res, 200, { details: { family: "qwen3" }, model_info: info });

  it("reads <general.architecture>.context_length from POST /api/show, once per model", async () => {
    const s = await serve(show({ "general.architecture": "qwen3", "qwen3.context_length": 40960, "llama.context_length": 1 }));
    const client = new OllamaClient({ model: "qwen3:8b", baseUrl: s.url, logger: () => {} });
    expect(await client.modelContextLength()).toBe(40960);
    expect(await client.modelContextLength()).toBe(40960);
    expect(await client.modelContextLength({ model: "qwen3:4b" })).toBe(40960);
    expect(s.requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ["POST", "/api/show", { model: "qwen3:8b" }],
      ["POST", "/api/show", { model: "qwen3:4b" }],
    ]);
    // The window requests get is still num_ctx (unset: Ollama's own default, which no endpoint reports).
    expect(await client.getContextLength()).toBeUndefined();
  });

  it("undefined when the card does not say; a nonsense value or no model_info is a ContextDiscoveryError; an unknown model Ollama's 404", async () => {
    const quiet = await serve(show({ "general.architecture": "qwen3" }));
    expect(await new OllamaClient({ model: "m", baseUrl: quiet.url, logger: () => {} }).modelContextLength()).toBeUndefined();
    const nonsense = await serve(show({ "general.architecture": "qwen3", "qwen3.context_length": "big" }));
    await expect(new OllamaClient({ model: "m", baseUrl: nonsense.url, logger: () => {} }).modelContextLength()).rejects.toThrow(ContextDiscoveryError);
    const bare = await serve((_req, res) => sendJson(res, 200, { license: "" }));
    await expect(new OllamaClient({ model: "m", baseUrl: bare.url, logger: () => {} }).modelContextLength()).rejects.toThrow(/model_info/);
    const missing = await serve((_req, res) => sendJson(res, 404, { error: "model 'm' not found" }));
    await expect(new OllamaClient({ model: "m", baseUrl: missing.url, logger: () => {} }).modelContextLength()).rejects.toThrow(BackendError);
  });
});
