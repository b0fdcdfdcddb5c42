import { describe, expect, it, vi } from "vitest";
import { LlamafileClient, type LlamafileClientOptions } from "../../src/clients/llamafile.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { buildToolPrompt } from "../../src/parsing/index.js";
import { collect, MESSAGES, TOOLS } from "./contract.js";
import { sendJson, sendSse, useFakeServers, type FakeHandler } from "./support/fake-server.js";
import { openaiCompletion, openaiSseEvents, type ModelReply } from "./support/wire.js";

const WIRE_TOOLS = TOOLS.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
const NO_JINJA = { error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" } };

/** A conversation one tool round in, as the runner serializes it ("openai" format). */
const HISTORY: WireMessage[] = [
  ...MESSAGES,
  { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
  { role: "tool", content: "72F and sunny", tool_call_id: "call_1", name: "get_weather" },
  { role: "user", content: "And tomorrow?" },
];

const serve = useFakeServers();
const replying = (reply: ModelReply): FakeHandler => (req, res) =>
  req.body.stream ? sendSse(res, openaiSseEvents(reply)) : sendJson(res, 200, openaiCompletion(reply));
/** A llama-server started without --jinja: any request with `tools` fails. */
const withoutJinja = (reply: ModelReply): FakeHandler => (req, res, n) =>
  req.body.tools ? sendJson(res, 500, NO_JINJA) : replying(reply)(req, res, n);

function client(url: string, options: Partial<LlamafileClientOptions> = {}) {
  const lines: [string, string][] = [];
  const c = new LlamafileClient({ ggufPath: "/models/Ministral-8B-Q4_K_M.gguf", baseUrl: `${url}/v1`, logger: (l, m) => void lines.push([l, m]), ...options });
  return Object.assign(c, { lines });
}

describe("LlamafileClient request bodies", () => {
  it("native: tools parameter, history as-is, sampling, cache_prompt and id_slot", async () => {
    const s = await serve(replying({ content: "ok" }));
    const c = client(s.url, { mode: "native", temperature: 0.3, sampling: { top_k: 40, min_p: 0.05 }, slotId: 2 });
    expect(c.model).toBe("Ministral-8B-Q4_K_M");
    expect(c.resolvedMode).toBe("native");
    await c.send(HISTORY, TOOLS);
    expect(s.requests[0]!.path).toBe("/v1/chat/completions");
    expect(s.requests[0]!.body).toEqual({
      model: "Ministral-8B-Q4_K_M",
      messages: HISTORY,
      stream: false,
      tools: WIRE_TOOLS,
      temperature: 0.3,
      top_k: 40,
      min_p: 0.05,
      cache_prompt: true,
      id_slot: 2,
    });
  });

  it("cachePrompt=false is sent; no id_slot without slotId", async () => {
    const s = await serve(replying({ content: "ok" }));
    await client(s.url, { mode: "native", cachePrompt: false }).send(MESSAGES);
    expect(s.requests[0]!.body).toEqual({ model: "Ministral-8B-Q4_K_M", messages: MESSAGES, stream: false, cache_prompt: false });
  });

  it("prompt: no tools; tool prompt in the system message; tool role downgraded; calls flattened; same roles merged", async () => {
    const s = await serve(replying({ content: "ok" }));
    await client(s.url, { mode: "prompt" }).send(HISTORY, TOOLS);
    expect(s.requests[0]!.body).toEqual({
      model: "Ministral-8B-Q4_K_M",
      stream: false,
      cache_prompt: true,
      messages: [
        { role: "system", content: `You help with weather.\n\n${buildToolPrompt(TOOLS)}` },
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: '```json\n{"tool":"get_weather","args":{"city":"Paris"}}\n```' },
        { role: "user", content: 'Tool "get_weather" returned:\n72F and sunny\n\nAnd tomorrow?' },
      ],
    });
  });

  it("prompt: parses the fenced JSON call out of the reply", async () => {
    const s = await serve(replying({ content: 'Sure.\n```json\n{"tool": "get_weather", "args": {"city": "Rome"}}\n```' }));
    expect(await client(s.url, { mode: "prompt" }).send(MESSAGES, TOOLS)).toMatchObject({
      type: "tool_calls",
      toolCalls: [{ tool: "get_weather", args: { city: "Rome" } }],
    });
  });
});

describe("LlamafileClient auto mode", () => {
  it("native works → resolvedMode native, decided once and logged", async () => {
    const s = await serve(replying({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
    const c = client(s.url);
    expect(c.resolvedMode).toBeUndefined();
    await c.send(MESSAGES, TOOLS);
    await c.send(MESSAGES, TOOLS);
    expect(c.resolvedMode).toBe("native");
    expect(s.requests.every((r) => r.body.tools !== undefined)).toBe(true);
    expect(c.lines).toEqual([["info", expect.stringContaining("using native")]]);
  });

  it("native refused → falls back to prompt once (logged), and stays there", async () => {
    const s = await serve(withoutJinja({ content: '```json\n{"tool": "get_weather", "args": {"city": "Paris"}}\n```' }));
    const c = client(s.url);
    expect(await c.send(HISTORY, TOOLS)).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] });
    expect(c.resolvedMode).toBe("prompt");
    await c.send(HISTORY, TOOLS);
    await collect(c.sendStream(HISTORY, TOOLS));
    expect(s.requests.map((r) => r.body.tools !== undefined)).toEqual([true, false, false, false]);
    expect(c.lines).toEqual([["warn", expect.stringMatching(/HTTP 500.*falling back to prompt/)]]);
  });

  it("the fallback also happens when the first request is a stream", async () => {
    const s = await serve(withoutJinja({ content: "plain answer" }));
    const c = client(s.url);
    const chunks = await collect(c.sendStream(MESSAGES, TOOLS));
    expect(chunks.at(-1)).toMatchObject({ type: "final", response: { type: "text", content: "plain answer" } });
    expect(c.resolvedMode).toBe("prompt");
    expect(c.streamRetries).toBe(0);
  });

  it.each([
    ["503 still loading", 503, { error: { code: 503, message: "Loading model", type: "unavailable_error" } }],
    ["429 busy", 429, { error: { code: 429, message: "no slot available" } }],
    ["401 auth", 401, { error: { code: 401, message: "Invalid API Key" } }],
    ["400 prompt too long", 400, { error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error" } }],
  ])("%s is not a reason to fall back: the error surfaces and native is tried again", async (_label, status, body) => {
    const s = await serve((_req, res, n) => (n === 0 ? sendJson(res, status, body) : replying({ content: "ok" })(_req, res, n)));
    const c = client(s.url);
    await expect(c.send(MESSAGES, TOOLS)).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: status });
    expect(c.resolvedMode).toBeUndefined();
    expect(s.requests).toHaveLength(1);
    await c.send(MESSAGES, TOOLS);
    expect(c.resolvedMode).toBe("native");
    expect(s.requests.map((r) => r.body.tools !== undefined)).toEqual([true, true]);
    expect(c.lines.some(([level]) => level === "warn")).toBe(false);
  });

  it("a connection failure is not a reason to fall back", async () => {
    const s = await serve((_req, res) => void res.socket?.destroy());
    const c = client(s.url);
    await expect(c.send(MESSAGES, TOOLS)).rejects.toMatchObject({ statusCode: 0 });
    expect(c.resolvedMode).toBeUndefined();
    expect(s.requests).toHaveLength(1);
  });
});

describe("LlamafileClient reasoning", () => {
  it("reasoning_content wins over think tags; tags are still stripped from content", async () => {
    const s = await serve(replying({ reasoning: "server-side", content: "<think>tagged</think>The answer." }));
    expect(await client(s.url, { mode: "native" }).send(MESSAGES)).toMatchObject({ type: "text", content: "The answer.", reasoning: "server-side" });
  });

  it.each([
    ["<think>", "<think>Check the units.</think>It is 20C."],
    ["[THINK]", "[THINK]Check the units.[/THINK]It is 20C."],
  ])("extracts %s tags when the server sends no reasoning_content", async (_label, content) => {
    const s = await serve(replying({ content }));
    const c = client(s.url, { mode: "native" });
    const sent = await c.send(MESSAGES);
    expect(sent).toMatchObject({ type: "text", content: "It is 20C.", reasoning: "Check the units." });
    expect((await collect(c.sendStream(MESSAGES))).at(-1)).toEqual({ type: "final", response: sent });
  });

  it("think=false discards reasoning from both sources and sends no reasoning deltas", async () => {
    const s = await serve(replying({ reasoning: "server-side", content: "<think>tagged</think>The answer." }));
    const c = client(s.url, { mode: "native", think: false });
    const sent = await c.send(MESSAGES);
    expect(sent).toEqual({ type: "text", content: "The answer.", usage: { inputTokens: 11, outputTokens: 7 } });
    const chunks = await collect(c.sendStream(MESSAGES));
    expect(chunks.some((ch) => ch.type === "text_delta" && ch.channel === "reasoning")).toBe(false);
    expect(chunks.at(-1)).toEqual({ type: "final", response: sent });
  });
});

describe("LlamafileClient server quirks", () => {
  const BROKEN_500 = {
    error: {
      code: 500,
      message: 'Failed to parse input at pos 0: <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      type: "server_error",
    },
  };

  it("rescues a tool call from a malformed 500 body (send and stream), without falling back in auto mode", async () => {
    const s = await serve((_req, res) => sendJson(res, 500, BROKEN_500));
    const c = client(s.url);
    const expected = { type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] };
    expect(await c.send(MESSAGES, TOOLS)).toMatchObject(expected);
    expect(c.resolvedMode).toBe("native");
    expect((await collect(c.sendStream(MESSAGES, TOOLS))).at(-1)).toMatchObject({ type: "final", response: expected });
    expect(s.requests).toHaveLength(2);
  });

  it("getContextLength reads /props default_generation_settings.n_ctx (no /v1)", async () => {
    const s = await serve((req, res) =>
      req.path === "/props" ? sendJson(res, 200, { default_generation_settings: { n_ctx: 32768, temperature: 0.8 }, total_slots: 1 }) : sendJson(res, 404, {}),
    );
    expect(await client(s.url).getContextLength()).toBe(32768);
    expect(s.requests.map((r) => [r.method, r.path])).toEqual([["GET", "/props"]]);
  });

  it("getContextLength: 404 → undefined; a nonsense n_ctx → ContextDiscoveryError", async () => {
    const s = await serve((_req, res, n) => (n === 0 ? sendJson(res, 404, { error: "not found" }) : sendJson(res, 200, { default_generation_settings: { n_ctx: "big" } })));
    const c = client(s.url);
    expect(await c.getContextLength()).toBeUndefined();
    await expect(c.getContextLength()).rejects.toMatchObject({ code: "FORGE_CONTEXT_DISCOVERY" });
  });

  it("assembles streamed tool-call arguments by index", async () => {
    const calls = [{ name: "get_weather", args: { city: "Paris" } }, { name: "answer", args: { text: "done" } }];
    const s = await serve(replying({ toolCalls: calls }));
    const chunks = await collect(client(s.url, { mode: "native" }).sendStream(MESSAGES, TOOLS));
    const deltas = chunks.filter((c) => c.type === "tool_call_delta");
    expect(deltas.filter((d) => d.name !== undefined).map((d) => [d.index, d.name, d.id])).toEqual([
      [0, "get_weather", "call_0"],
      [1, "answer", "call_1"],
    ]);
    expect(chunks.at(-1)).toMatchObject({
      type: "final",
      response: { type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" }, id: "call_0" }, { tool: "answer", args: { text: "done" }, id: "call_1" }] },
    });
  });
});

describe("LlamafileClient stream faults", () => {
  it("llama-server's `error:` SSE line (then [DONE]) is the server's BackendError, not an empty FINAL", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(openaiSseEvents({ content: "x" })[0])}\n\n`);
      res.write('error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}\n\n');
      res.end("data: [DONE]\n\n");
    });
    const c = client(s.url, { mode: "native" });
    const error = await collect(c.sendStream(MESSAGES, TOOLS)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "FORGE_BACKEND", statusCode: 400 });
    expect((error as Error).message).toContain("exceeds the available context size");
    expect(c.streamRetries).toBe(0);
    expect(s.requests).toHaveLength(1);
  });

  it("`event: error` and a data error object carry the server's status code", async () => {
    const s = await serve((_req, res, n) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (n === 0) res.end('event: error\ndata: {"error":{"code":503,"message":"overloaded"}}\n\n');
      else res.end('data: {"error":{"message":"no code given"}}\n\n');
    });
    const c = client(s.url, { mode: "native" });
    await expect(collect(c.sendStream(MESSAGES))).rejects.toMatchObject({ statusCode: 503 });
    await expect(collect(c.sendStream(MESSAGES))).rejects.toMatchObject({ statusCode: 500 });
    expect(c.streamRetries).toBe(0);
  });

  it("a consumer that stops after the first chunk releases the connection at once", async () => {
    let closed = false;
    const s = await serve((_req, res) => {
      res.on("close", () => (closed = true));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(openaiSseEvents({ content: "hello" })[1])}\n\n`); // then silence
    });
    const c = client(s.url, { mode: "native", timeoutMs: 60_000 });
    for await (const chunk of c.sendStream(MESSAGES)) {
      expect(chunk).toMatchObject({ type: "text_delta" });
      break;
    }
    await vi.waitUntil(() => closed, { timeout: 30_000, interval: 5 });
    expect(s.requests).toHaveLength(1);
  });
});

describe("LlamafileClient options", () => {
  it.each([
    [{}, "ggufPath"],
    [{ ggufPath: "/m/a.gguf", mode: "fast" }, "mode"],
    [{ ggufPath: "/m/a.gguf", slotId: -1 }, "slotId"],
    [{ ggufPath: "/m/a.gguf", sampling: { cache_prompt: false } }, "sampling.cache_prompt"],
    [{ ggufPath: "/m/a.gguf", cachePrompt: "yes" }, "cachePrompt"],
  ])("rejects %j naming %s", (options, field) => {
    expect(() => new LlamafileClient(options as never)).toThrow(expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", argument: field }));
  });

  it("model overrides the GGUF stem when given", () => {
    expect(new LlamafileClient({ model: "served-name" }).model).toBe("served-name");
    expect(new LlamafileClient({ ggufPath: "C:\\models\\Qwen3-8B.Q8_0.gguf" }).model).toBe("Qwen3-8B.Q8_0");
  });
});

describe("LlamafileClient rescue marker", () => {
  it("calls recovered from prompt-mode text carry rescued: true, native calls do not", async () => {
    const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';
    const s = await serve((_req, res, n) =>
      sendJson(res, 200, openaiCompletion(n === 0 ? { content: text } : { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] })),
    );
    const prompt = await new LlamafileClient({ model: "m", baseUrl: `${s.url}/v1`, mode: "prompt" }).send(MESSAGES, TOOLS);
    const native = await new LlamafileClient({ model: "m", baseUrl: `${s.url}/v1`, mode: "native" }).send(MESSAGES, TOOLS);
    expect(prompt).toMatchObject({ type: "tool_calls", rescued: true, toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] });
    expect(native).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "get_weather" }] });
    expect("rescued" in native).toBe(false);
  });
});
