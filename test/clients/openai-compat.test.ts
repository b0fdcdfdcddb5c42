import { describe, expect, it } from "vitest";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { collect, MESSAGES, TOOLS } from "./contract.js";
import { sendJson, sendSse, useFakeServers, type FakeHandler } from "./support/fake-server.js";
import { openaiCompletion, openaiSseEvents, type ModelReply } from "./support/wire.js";

const WIRE_TOOLS = TOOLS.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));

const serve = useFakeServers();
const replying = (reply: ModelReply): FakeHandler => (req, res) =>
  req.body.stream ? sendSse(res, openaiSseEvents(reply)) : sendJson(res, 200, openaiCompletion(reply));

describe("OpenAICompatClient", () => {
  it("sends bearer auth, custom headers and the exact body (extraBody merged)", async () => {
    const s = await serve(replying({ content: "ok" }));
    const client = new OpenAICompatClient({
      model: "Qwen/Qwen3-8B",
      baseUrl: `${s.url}/v1/`,
      apiKey: "sk-secret",
      temperature: 0.6,
      headers: { "x-gateway": "lab" },
      extraBody: { top_k: 20, chat_template_kwargs: { enable_thinking: false } },
    });
    await client.send(MESSAGES, TOOLS);
    await collect(client.sendStream(MESSAGES, TOOLS));
    const [plain, streamed] = s.requests;
    expect(plain!.path).toBe("/v1/chat/completions");
    expect(plain!.headers.authorization).toBe("Bearer sk-secret");
    expect(plain!.headers["x-gateway"]).toBe("lab");
    expect(plain!.body).toEqual({
      model: "Qwen/Qwen3-8B",
      messages: MESSAGES,
      stream: false,
      tools: WIRE_TOOLS,
      temperature: 0.6,
      top_k: 20,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(streamed!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("no Authorization header without apiKey", async () => {
    const s = await serve(replying({ content: "ok" }));
    await new OpenAICompatClient({ model: "m", baseUrl: s.url }).send(MESSAGES);
    expect(s.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("captures usage from send and from the stream's usage chunk", async () => {
    const s = await serve(replying({ content: "ok", usage: { input: 300, output: 12 } }));
    const client = new OpenAICompatClient({ model: "m", baseUrl: s.url });
    await client.send(MESSAGES);
    expect(client.lastUsage).toEqual({ inputTokens: 300, outputTokens: 12 });
    client.lastUsage = undefined;
    const chunks = await collect(client.sendStream(MESSAGES));
    expect(client.lastUsage).toEqual({ inputTokens: 300, outputTokens: 12 });
    expect(chunks.at(-1)).toMatchObject({ response: { usage: { inputTokens: 300, outputTokens: 12 } } });
  });

  it("keeps malformed or non-object arguments as decoded once, never {}", async () => {
    const reply: ModelReply = {
      toolCalls: [
        { name: "get_weather", args: '{"city": "Par' },
        { name: "answer", args: '"just a string"' },
        { name: "answer", args: "" },
      ],
    };
    const s = await serve(replying(reply));
    const client = new OpenAICompatClient({ model: "m", baseUrl: s.url });
    const sent = await client.send(MESSAGES, TOOLS);
    expect(sent).toMatchObject({
      type: "tool_calls",
      toolCalls: [
        { tool: "get_weather", args: '{"city": "Par' },
        { tool: "answer", args: "just a string" },
        { tool: "answer", args: {} }, // "" = a call without arguments
      ],
    });
    expect((await collect(client.sendStream(MESSAGES, TOOLS))).at(-1)).toEqual({ type: "final", response: sent });
  });

  it("rescues a call written into content (model ignored native FC)", async () => {
    const s = await serve(replying({ content: '[TOOL_CALLS]get_weather{"city": "Paris"}' }));
    const client = new OpenAICompatClient({ model: "m", baseUrl: s.url });
    expect(await client.send(MESSAGES, TOOLS)).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] });
  });

  it("getContextLength from /models max_model_len; undefined on 404", async () => {
    const s = await serve((_req, res, n) =>
      n === 0
        ? sendJson(res, 200, { object: "list", data: [{ id: "other", max_model_len: 1 }, { id: "Qwen/Qwen3-8B", object: "model", max_model_len: 40960 }] })
        : sendJson(res, 404, { error: "no such route" }),
    );
    const client = new OpenAICompatClient({ model: "Qwen/Qwen3-8B", baseUrl: `${s.url}/v1`, apiKey: "k" });
    expect(await client.getContextLength()).toBe(40960);
    expect(s.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", headers: { authorization: "Bearer k" } });
    expect(await client.getContextLength()).toBeUndefined();
  });

  it("getContextLength answers for another model of the server, and a configured contextLength without asking", async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { object: "list", data: [{ id: "small", max_model_len: 8192 }, { id: "Qwen/Qwen3-8B", max_model_len: 40960 }] }));
    expect(await new OpenAICompatClient({ model: "Qwen/Qwen3-8B", baseUrl: `${s.url}/v1` }).getContextLength({ model: "small" })).toBe(8192);
    const configured = new OpenAICompatClient({ model: "Qwen/Qwen3-8B", baseUrl: `${s.url}/v1`, contextLength: 16_384 });
    expect(await configured.getContextLength()).toBe(16_384);
    expect(s.requests).toHaveLength(1);
    expect(() => new OpenAICompatClient({ model: "m", baseUrl: s.url, contextLength: 0 })).toThrow(/contextLength/);
  });

  it.each([
    [{ model: "m" }, "baseUrl"],
    [{ baseUrl: "http://x" }, "model"],
    [{ model: "m", baseUrl: "http://x", extraBody: { messages: [] } }, "extraBody.messages"],
    [{ model: "m", baseUrl: "http://x", headers: { a: 1 } }, "headers.a"],
    [{ model: "m", baseUrl: "ftp://x" }, "baseUrl"],
  ])("rejects %j naming %s", (options, field) => {
    expect(() => new OpenAICompatClient(options as never)).toThrow(expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", argument: field }));
  });
});
