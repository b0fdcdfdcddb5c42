import { propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { describe, expect, it } from "vitest";
import { AnthropicClient } from "../../src/clients/anthropic.js";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { anthropicParams, authHeaders, ollamaBody, openAIBody } from "../../src/clients/request-overrides.js";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { BackendError } from "../../src/core/errors.js";
import type { RequestOverrides } from "../../src/core/llm.js";
import { collect, MESSAGES, TOOLS } from "./contract.js";
import { sendJson, sendNdjson, sendSse, useFakeServers } from "./support/fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents } from "./support/wire.js";

const serve = useFakeServers();

const CALLER: RequestOverrides = {
  model: "caller-model",
  toolChoice: "required",
  body: { temperature: 0.1, top_p: 0.9, max_tokens: 64, stop: "END", seed: 7, logit_bias: { "42": -100 }, model: "sneaky", messages: [], stream: true },
};

describe("openAIBody", () => {
  it("caller fields win over client defaults; fields the client owns never change", () => {
    const base = { model: "m", messages: MESSAGES, stream: false, tools: [{ type: "function" }], temperature: 0.7 };
    expect(openAIBody(base, CALLER)).toEqual({
      model: "caller-model",
      messages: MESSAGES,
      stream: false,
      tools: [{ type: "function" }],
      tool_choice: "required",
      temperature: 0.1,
      top_p: 0.9,
      max_tokens: 64,
      stop: "END",
      seed: 7,
      logit_bias: { "42": -100 },
    });
  });

  it("tool_choice only travels with tools; no overrides is the same object", () => {
    const base = { model: "m", messages: [], stream: false };
    expect(openAIBody(base, { toolChoice: "auto" })).toEqual(base);
    expect(openAIBody(base, undefined)).toBe(base);
  });
});

describe("ollamaBody", () => {
  it("maps OpenAI sampling names into options and response_format into format", () => {
    const base = { model: "m", messages: [], stream: false, options: { num_ctx: 8192, temperature: 0.7 } };
    const body = ollamaBody(base, {
      model: "qwen3:8b",
      body: { temperature: 0, max_tokens: 32, stop: "\n\n", seed: 1, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } }, user: "u1", keep_alive: "5m" },
    });
    expect(body).toEqual({
      model: "qwen3:8b",
      messages: [],
      stream: false,
      keep_alive: "5m",
      format: { type: "object" },
      options: { num_ctx: 8192, temperature: 0, num_predict: 32, stop: ["\n\n"], seed: 1 },
    });
    expect(ollamaBody({ model: "m" }, { body: { response_format: { type: "json_object" } } })).toEqual({ model: "m", format: "json" });
  });

  it("reasoning_effort becomes Ollama's thinking level, over the client's think: true", () => {
    expect(ollamaBody({ model: "m", think: true }, { body: { reasoning_effort: "low" } })).toEqual({ model: "m", think: "low" });
  });
});

describe("anthropicParams", () => {
  it("maps max_tokens, sampling, stop and tool_choice", () => {
    const params = { model: "claude", max_tokens: 4096, messages: [], tools: [{ name: "a" }] };
    expect(anthropicParams(params, { ...CALLER, toolChoice: { type: "function", function: { name: "a" } } })).toEqual({
      model: "caller-model",
      max_tokens: 64,
      messages: [],
      tools: [{ name: "a" }],
      temperature: 0.1,
      top_p: 0.9,
      stop_sequences: ["END"],
      tool_choice: { type: "tool", name: "a" },
    });
    expect(anthropicParams(params, { toolChoice: "required" })).toMatchObject({ tool_choice: { type: "any" } });
  });

  it("reasoning_effort becomes output_config.effort", () => {
    expect(anthropicParams({ model: "claude", max_tokens: 4096 }, { body: { reasoning_effort: "xhigh" } })).toEqual({ model: "claude", max_tokens: 4096, output_config: { effort: "xhigh" } });
  });
});

describe("authHeaders", () => {
  it("the caller's key replaces the client's Authorization, other headers stay", () => {
    expect(authHeaders({ Authorization: "Bearer mine", "x-gateway": "lab" }, { apiKey: "theirs" })).toEqual({ "x-gateway": "lab", authorization: "Bearer theirs" });
    const mine = { authorization: "Bearer mine" };
    expect(authHeaders(mine, {})).toBe(mine);
  });
});

describe("clients send the overrides on the wire", () => {
  it("OpenAICompatClient: body, tool_choice and forwarded credential, streamed and not", async () => {
    const s = await serve((req, res) => (req.body.stream ? sendSse(res, openaiSseEvents({ content: "ok" })) : sendJson(res, 200, openaiCompletion({ content: "ok" }))));
    const client = new OpenAICompatClient({ model: "m", baseUrl: `${s.url}/v1`, apiKey: "operator", temperature: 0.7 });
    const request = { ...CALLER, apiKey: "caller" };
    await client.send(MESSAGES, TOOLS, { request });
    await collect(client.sendStream(MESSAGES, TOOLS, { request }));
    for (const r of s.requests) {
      expect(r.headers.authorization).toBe("Bearer caller");
      expect(r.body).toMatchObject({ model: "caller-model", tool_choice: "required", temperature: 0.1, max_tokens: 64, logit_bias: { "42": -100 }, messages: MESSAGES });
    }
    expect(s.requests.map((r) => r.body.stream)).toEqual([false, true]);
  });

  it("LlamafileClient: prompt mode drops tool_choice (no tools param) but keeps sampling", async () => {
    const s = await serve((_req, res) => sendJson(res, 200, openaiCompletion({ content: "ok" })));
    const client = new LlamafileClient({ model: "m", baseUrl: `${s.url}/v1`, mode: "prompt" });
    await client.send(MESSAGES, TOOLS, { request: CALLER });
    const body = s.requests[0]!.body;
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(body).toMatchObject({ model: "caller-model", temperature: 0.1, seed: 7, cache_prompt: true });
  });

  it("OllamaClient: options mapping and credential, streamed and not", async () => {
    const s = await serve((req, res) => (req.body.stream ? sendNdjson(res, ollamaStreamLines({ content: "ok" })) : sendJson(res, 200, ollamaChat({ content: "ok" }))));
    const client = new OllamaClient({ model: "m", baseUrl: s.url, think: false, numCtx: 4096 });
    await client.send(MESSAGES, TOOLS, { request: { ...CALLER, apiKey: "k" } });
    await collect(client.sendStream(MESSAGES, TOOLS, { request: CALLER }));
    const [plain, streamed] = s.requests;
    expect(plain!.headers.authorization).toBe("Bearer k");
    expect(plain!.body).toMatchObject({ model: "caller-model", options: { num_ctx: 4096, temperature: 0.1, top_p: 0.9, num_predict: 64, stop: ["END"], seed: 7 } });
    expect(plain!.body.tool_choice).toBeUndefined();
    expect(plain!.body.logit_bias).toBeUndefined();
    expect(streamed!.headers.authorization).toBeUndefined();
    expect(streamed!.body.stream).toBe(true);
  });

  it("AnthropicClient: mapped params and the caller's x-api-key", async () => {
    const s = await serve((_req, res) =>
      sendJson(res, 200, {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "caller-model",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 1 },
      }),
    );
    const client = new AnthropicClient({ model: "claude-test", apiKey: "operator", baseURL: s.url, timeoutMs: 5_000 });
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const traceContext = trace.setSpanContext(ROOT_CONTEXT, { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 });
    try {
      await client.send(MESSAGES, TOOLS, { request: { ...CALLER, apiKey: "caller" }, traceContext });
    } finally {
      propagation.disable();
    }
    const r = s.requests[0]!;
    expect(r.headers["x-api-key"]).toBe("caller");
    expect(r.headers.traceparent).toBe(traceparent);
    expect(r.body).toMatchObject({ model: "caller-model", max_tokens: 64, temperature: 0.1, stop_sequences: ["END"], tool_choice: { type: "any" } });
    expect(r.body.seed).toBeUndefined();
  });

  it("ScriptedClient records the overrides it was given", async () => {
    const client = new ScriptedClient({ responses: [{ type: "text", content: "ok" }] });
    await client.send(MESSAGES, undefined, { request: { model: "x" } });
    expect(client.requests[0]!.request).toEqual({ model: "x" });
  });
});

describe("listModels", () => {
  it("Ollama /api/tags", async () => {
    const s = await serve((_req, res) =>
      sendJson(res, 200, { models: [{ name: "qwen3:8b", model: "qwen3:8b", modified_at: "2025-05-01T10:00:00Z", size: 5 }, { model: "llama3.1:8b" }, { size: 1 }] }),
    );
    const models = await new OllamaClient({ model: "qwen3:8b", baseUrl: s.url }).listModels();
    expect(s.requests[0]!.path).toBe("/api/tags");
    expect(models).toEqual([
      { id: "qwen3:8b", ownedBy: "ollama", created: Date.parse("2025-05-01T10:00:00Z") / 1000 },
      { id: "llama3.1:8b", ownedBy: "ollama" },
    ]);
  });

  it("OpenAI-style /models with the client's credential; llama-server the same", async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { object: "list", data: [{ id: "Qwen3-8B", object: "model", created: 1700000000, owned_by: "llamacpp" }] }));
    const compat = await new OpenAICompatClient({ model: "m", baseUrl: `${s.url}/v1`, apiKey: "k" }).listModels();
    const llama = await new LlamafileClient({ model: "m", baseUrl: `${s.url}/v1` }).listModels();
    expect(compat).toEqual([{ id: "Qwen3-8B", ownedBy: "llamacpp", created: 1700000000 }]);
    expect(llama).toEqual(compat);
    expect(s.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
      ["/v1/models", "Bearer k"],
      ["/v1/models", undefined],
    ]);
  });

  it("Anthropic Models API, every page", async () => {
    const s = await serve((req, res) =>
      sendJson(
        res,
        200,
        req.path.includes("after_id")
          ? { data: [{ type: "model", id: "claude-b", display_name: "B", created_at: "2025-02-01T00:00:00Z" }], has_more: false, first_id: "claude-b", last_id: "claude-b" }
          : { data: [{ type: "model", id: "claude-a", display_name: "A", created_at: "2025-01-01T00:00:00Z" }], has_more: true, first_id: "claude-a", last_id: "claude-a" },
      ),
    );
    const models = await new AnthropicClient({ model: "claude-a", apiKey: "k", baseURL: s.url, timeoutMs: 5_000 }).listModels();
    expect(models.map((m) => m.id)).toEqual(["claude-a", "claude-b"]);
    expect(s.requests[0]!.path).toMatch(/^\/v1\/models/);
  });

  it("an answer that is not a model list is a BackendError, and a dead server too", async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { hello: "world" }));
    await expect(new OllamaClient({ model: "m", baseUrl: s.url }).listModels()).rejects.toBeInstanceOf(BackendError);
    await expect(new OpenAICompatClient({ model: "m", baseUrl: s.url }).listModels()).rejects.toThrow(/did not answer a model list/);
    await expect(new OllamaClient({ model: "m", baseUrl: "http://127.0.0.1:1" }).listModels()).rejects.toMatchObject({ statusCode: 0 });
  });
});
