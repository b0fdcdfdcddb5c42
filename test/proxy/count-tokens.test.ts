/**
 * POST /v1/messages/count_tokens through the official `@anthropic-ai/sdk` client, in front of
 * loopback backends: llama-server (its /apply-template and /tokenize), Ollama (no tokenizer:
 * an estimate, said so in a header), a failing tokenizer (the same, with the reason) and the
 * Anthropic API (its own count_tokens).
 */
import Anthropic from "@anthropic-ai/sdk";
import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AnthropicClient } from "../../src/clients/anthropic.js";
import { LlamafileClient, type LlamafileMode } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import type { LLMClient } from "../../src/core/llm.js";
import { createProxy, type ProxyOptions } from "../../src/proxy/create-proxy.js";
import { sendJson, useFakeServers, type FakeServer, type RecordedRequest } from "../clients/support/fake-server.js";
import { WEATHER_SCHEMA } from "./support/harness.js";

const serve = useFakeServers();
const proxies: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
beforeEach(() => {
  // The proxy logs each new fallback reason once; the tests read it from the header instead.
  vi.spyOn(console, "warn").mockImplementation(() => {});
});

async function sdkFor(client: LLMClient, options: Partial<ProxyOptions> = {}, apiKey = "unused"): Promise<Anthropic> {
  const proxy = createProxy({ client, ...options });
  proxies.push(proxy);
  const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
  return new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });
}

const tools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_SCHEMA }];
const params = (extra: Partial<Anthropic.MessageCountTokensParams> = {}): Anthropic.MessageCountTokensParams => ({
  model: "qwen3-8b-q4",
  system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
  messages: [{ role: "user", content: "Weather in Oslo?" }],
  tools,
  ...extra,
});

/** A ChatML-ish template and a whitespace tokenizer: deterministic, and easy to check by hand. */
function render(body: { messages: { role: string; content: string | null }[]; tools?: unknown[] }): string {
  const turns = body.messages.map((m) => `<|im_start|>${m.role}\n${m.content ?? ""}<|im_end|>\n`).join("");
  return body.tools ? `<tools> ${JSON.stringify(body.tools)} </tools>\n${turns}` : turns;
}
const tokenize = (content: string) => content.split(/\s+/).filter((s) => s.length > 0).map((_, i) => i);

type Handler = (req: RecordedRequest, res: ServerResponse) => void;
const applyTemplate: Handler = (req, res) => sendJson(res, 200, { prompt: render(req.body) });
const tokenizeOk: Handler = (req, res) => sendJson(res, 200, { tokens: tokenize(req.body.content) });

function llamaServer(routes: { "/apply-template"?: Handler; "/tokenize"?: Handler } = {}): Promise<FakeServer> {
  const handlers: Record<string, Handler> = { "/apply-template": applyTemplate, "/tokenize": tokenizeOk, ...routes };
  return serve((req, res) => {
    const handler = handlers[req.path];
    if (handler) handler(req, res);
    else sendJson(res, 404, { error: { code: 404, message: "File Not Found", type: "not_found_error" } });
  });
}
const llama = (server: FakeServer, mode: LlamafileMode) => new LlamafileClient({ model: "qwen3-8b", baseUrl: `${server.url}/v1`, mode, logger: () => {} });

describe("count_tokens on a llama-server backend", () => {
  it("counts with the server's own template and tokenizer (native tools)", async () => {
    const server = await llamaServer();
    const sdk = await sdkFor(llama(server, "native"));
    const { data, response } = await sdk.messages.countTokens(params()).withResponse();
    const [templated] = server.to("/apply-template");
    const [tokenized] = server.to("/tokenize");
    expect(templated!.body).toMatchObject({ model: "qwen3-8b-q4", tools: [{ type: "function", function: { name: "get_weather" } }] });
    expect(templated!.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Oslo?" },
    ]);
    expect(tokenized!.body).toMatchObject({ content: render(templated!.body), add_special: true });
    expect(data).toEqual({ input_tokens: tokenize(tokenized!.body.content).length });
    expect(response.headers.get("x-forge-token-count")).toBe("backend");
    expect(response.headers.get("x-forge-token-count-reason")).toBeNull();
  });

  it("in prompt mode the tool prompt rides in the system message, as a chat request would send it", async () => {
    const server = await llamaServer();
    const sdk = await sdkFor(llama(server, "prompt"));
    const { data, response } = await sdk.messages.countTokens(params()).withResponse();
    const [templated] = server.to("/apply-template");
    expect(templated!.body.tools).toBeUndefined();
    expect(templated!.body.messages[0].content).toMatch(/^Be brief\.\n\n[\s\S]*get_weather/);
    expect(response.headers.get("x-forge-token-count")).toBe("backend");
    expect(data.input_tokens).toBe(tokenize(render(templated!.body)).length);
  });

  it("auto mode on a server without --jinja counts in prompt mode", async () => {
    const server = await llamaServer({
      "/apply-template": (req, res) =>
        req.body.tools ? sendJson(res, 500, { error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" } }) : applyTemplate(req, res),
    });
    const sdk = await sdkFor(llama(server, "auto"));
    const { response } = await sdk.messages.countTokens(params()).withResponse();
    expect(response.headers.get("x-forge-token-count")).toBe("backend");
    expect(server.to("/apply-template").map((r) => r.body.tools === undefined)).toEqual([false, true]);
  });

  it("falls back to the estimate, with the reason, when /tokenize fails", async () => {
    const server = await llamaServer({ "/tokenize": (_req, res) => sendJson(res, 500, { error: { code: 500, message: "boom", type: "server_error" } }) });
    const sdk = await sdkFor(llama(server, "native"));
    const { data, response } = await sdk.messages.countTokens(params({ system: undefined, tools: undefined })).withResponse();
    expect(response.headers.get("x-forge-token-count")).toBe("estimate");
    expect(response.headers.get("x-forge-token-count-reason")).toBe("backend tokenizer failed: HTTP 500");
    // chars/4 of "Weather in Oslo?" (16 → 4) plus 4 per message for the template's markers.
    expect(data).toEqual({ input_tokens: 8 });
    expect(console.warn).toHaveBeenCalledWith(expect.stringContaining("backend tokenizer failed: HTTP 500"));
  });

  it("falls back when the server has no /apply-template (llamafile)", async () => {
    const server = await llamaServer({ "/apply-template": (_req, res) => sendJson(res, 404, "File Not Found") });
    const sdk = await sdkFor(llama(server, "native"));
    const { response } = await sdk.messages.countTokens(params()).withResponse();
    expect(response.headers.get("x-forge-token-count-reason")).toBe("backend tokenizer failed: HTTP 404");
    expect(server.to("/tokenize")).toHaveLength(0);
  });

  it("pins the client's model when forwardModel is off", async () => {
    const server = await llamaServer();
    const sdk = await sdkFor(llama(server, "native"), { forwardModel: false });
    await sdk.messages.countTokens(params());
    expect(server.to("/apply-template")[0]!.body.model).toBe("qwen3-8b");
  });
});

describe("count_tokens on an Ollama backend", () => {
  it("answers the estimate and says so: Ollama has no tokenizer endpoint", async () => {
    const server = await serve((_req, res) => sendJson(res, 500, { error: "unexpected request" }));
    const sdk = await sdkFor(new OllamaClient({ model: "qwen3:8b", baseUrl: server.url, logger: () => {} }));
    const bare = await sdk.messages.countTokens(params({ system: undefined, tools: undefined })).withResponse();
    expect(bare.data).toEqual({ input_tokens: 8 });
    expect(bare.response.headers.get("x-forge-token-count")).toBe("estimate");
    expect(bare.response.headers.get("x-forge-token-count-reason")).toBe("OllamaClient has no tokenizer endpoint");
    // Tools and the system prompt take context too.
    const full = await sdk.messages.countTokens(params());
    expect(full.input_tokens).toBeGreaterThan(bare.data.input_tokens + 20);
    // tool_choice "none" sends no tools to the backend, so they are not counted.
    const none = await sdk.messages.countTokens(params({ tool_choice: { type: "none" } }));
    expect(none.input_tokens).toBeLessThan(full.input_tokens);
    expect(server.requests).toHaveLength(0);
  });
});

describe("count_tokens on an Anthropic backend", () => {
  it("asks the Messages API's own count_tokens, with the caller's key under forwardAuth", async () => {
    const server = await serve((req, res) => (req.path === "/v1/messages/count_tokens" ? sendJson(res, 200, { input_tokens: 321 }) : sendJson(res, 404, {})));
    const client = new AnthropicClient({ model: "claude-haiku-4-5", baseURL: server.url, apiKey: "sk-operator" });
    const sdk = await sdkFor(client, { forwardAuth: true }, "sk-caller");
    const { data, response } = await sdk.messages.countTokens(params()).withResponse();
    expect(data).toEqual({ input_tokens: 321 });
    expect(response.headers.get("x-forge-token-count")).toBe("backend");
    const [sent] = server.requests;
    expect(sent!.headers["x-api-key"]).toBe("sk-caller");
    expect(sent!.body).toMatchObject({ model: "qwen3-8b-q4", system: "Be brief.", tools: [{ name: "get_weather", input_schema: WEATHER_SCHEMA }] });
    expect(sent!.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] }]);
    expect(sent!.body.max_tokens).toBeUndefined();
  });
});

describe("count_tokens requests", () => {
  it("takes the beta path and headers Claude Code uses", async () => {
    const server = await llamaServer();
    const sdk = await sdkFor(llama(server, "native"));
    const count = await sdk.beta.messages.countTokens({ ...params(), betas: ["token-counting-2024-11-01", "interleaved-thinking-2025-05-14"], thinking: { type: "enabled", budget_tokens: 2048 } } as Anthropic.Beta.MessageCountTokensParams);
    expect(count.input_tokens).toBeGreaterThan(0);
  });

  it("rejects a malformed body with the Messages endpoint's 400, and sits behind the proxy's key", async () => {
    const server = await llamaServer();
    const sdk = await sdkFor(llama(server, "native"), { apiKey: "secret" }, "secret");
    const error = await sdk.messages.countTokens({ model: "m", messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toMatch(/messages: at least one message is required/);
    const stranger = new Anthropic({ baseURL: sdk.baseURL, apiKey: "wrong", maxRetries: 0 });
    await expect(stranger.messages.countTokens(params())).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    expect(server.requests).toHaveLength(0);
  });
});
