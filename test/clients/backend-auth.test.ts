/**
 * Every client sends its key on every request it makes — chat, streamed chat, the model list,
 * the window (/props, /api/show, vLLM's /models), token counting (/apply-template, /tokenize)
 * and Ollama's pass-through forward() — to a loopback server that answers 401 without it, as
 * llama-server --api-key, vLLM --api-key and Ollama behind a bearer-checking proxy do. A
 * caller's key given with one request replaces the client's own for that request.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { BackendError, InvalidArgumentError } from "../../src/core/errors.js";
import { collect, MESSAGES, TOOLS } from "./contract.js";
import { KEYED_WINDOW, UNAUTHORIZED, useKeyedServers, type KeyedServer } from "./support/keyed-server.js";

const serve = useKeyedServers();
const quiet = () => undefined;

/** Every call a llama-server client makes, in order; each resolves to something checkable. */
async function llamaCalls(client: LlamafileClient): Promise<unknown[]> {
  return [
    await client.listModels(),
    await client.getContextLength(),
    await client.countTokens(MESSAGES, TOOLS),
    await client.send(MESSAGES, TOOLS),
    (await collect(client.sendStream(MESSAGES, TOOLS))).at(-1),
  ];
}

async function ollamaCalls(client: OllamaClient): Promise<unknown[]> {
  return [
    await client.listModels(),
    await client.modelContextLength(),
    await client.send(MESSAGES, TOOLS),
    (await collect(client.sendStream(MESSAGES, TOOLS))).at(-1),
    JSON.parse(await (await client.forward("/api/generate", { method: "POST", json: { model: "test-model", prompt: "hi", stream: false } })).text()),
    JSON.parse(await (await client.forward("/api/tags", { method: "GET" })).text()),
  ];
}

const refusedWith401 = (error: unknown) => error instanceof BackendError && error.statusCode === 401 && error.body === JSON.stringify(UNAUTHORIZED);

/** The call rejects with the server's own 401 (not a 0 "unreachable", not a dropped request). */
async function expect401(call: () => Promise<unknown>): Promise<void> {
  const error = await call().then(
    () => expect.fail("should have been refused"),
    (e: unknown) => e,
  );
  expect(refusedWith401(error), String(error)).toBe(true);
}

function everyRequestCarried(server: KeyedServer, auth: string): void {
  expect(server.requests.length).toBeGreaterThan(0);
  expect(server.auths()).toEqual(server.requests.map(() => auth));
  expect(server.refused()).toEqual([]);
}

describe("LlamafileClient apiKey (llama-server --api-key, llamafile)", () => {
  it("sends Authorization: Bearer <key> on chat, stream, /models, /props, /apply-template and /tokenize", async () => {
    const s = await serve("llamaserver", ["k"]);
    const [models, window, tokens, sent, streamed] = await llamaCalls(new LlamafileClient({ model: "test-model", baseUrl: s.baseUrl, apiKey: "k", logger: quiet }));
    expect(models).toEqual([{ id: "test-model", ownedBy: "llamacpp", created: 1_700_000_000 }]);
    expect(window).toBe(KEYED_WINDOW);
    expect(tokens).toBeGreaterThan(0);
    expect(sent).toMatchObject({ type: "text", content: "hello" });
    expect(streamed).toMatchObject({ type: "final", response: { type: "text", content: "hello" } });
    expect(new Set(s.requests.map((r) => r.path))).toEqual(new Set(["/v1/models", "/props", "/apply-template", "/tokenize", "/v1/chat/completions"]));
    everyRequestCarried(s, "Bearer k");
  });

  it("without a key, or with another, each call is the server's 401", async () => {
    const s = await serve("llamaserver", ["k"]);
    for (const client of [new LlamafileClient({ model: "m", baseUrl: s.baseUrl, logger: quiet }), new LlamafileClient({ model: "m", baseUrl: s.baseUrl, apiKey: "wrong", logger: quiet })]) {
      await expect401(() => client.listModels());
      await expect401(() => client.getContextLength());
      await expect401(() => client.countTokens(MESSAGES, TOOLS));
      // Auto mode: a 401 is not "no native tools", so it neither falls back nor settles the mode.
      await expect401(() => client.send(MESSAGES, TOOLS));
      await expect401(() => collect(client.sendStream(MESSAGES, TOOLS)));
      expect(client.resolvedMode).toBeUndefined();
    }
  });

  it("a caller's key given with the request replaces the client's own (chat, stream, token count)", async () => {
    const s = await serve("llamaserver", ["caller"]);
    const client = new LlamafileClient({ model: "m", baseUrl: s.baseUrl, apiKey: "operator", mode: "native", logger: quiet });
    await client.send(MESSAGES, TOOLS, { request: { apiKey: "caller" } });
    await collect(client.sendStream(MESSAGES, TOOLS, { request: { apiKey: "caller" } }));
    await client.countTokens(MESSAGES, TOOLS, { apiKey: "caller" });
    everyRequestCarried(s, "Bearer caller");
    await expect401(() => client.send(MESSAGES, TOOLS));
  });
});

describe("OllamaClient apiKey (Ollama behind an authenticating reverse proxy)", () => {
  it("sends Authorization: Bearer <key> on /api/chat (plain and NDJSON), /api/tags, /api/show and forward()", async () => {
    const s = await serve("ollama", ["k"]);
    const [models, window, sent, streamed, generated, tags] = await ollamaCalls(new OllamaClient({ model: "test-model", baseUrl: s.baseUrl, apiKey: "k", logger: quiet }));
    expect(models).toEqual([{ id: "test-model", ownedBy: "ollama", created: Date.parse("2026-01-01T00:00:00Z") / 1000 }]);
    expect(window).toBe(KEYED_WINDOW);
    expect(sent).toMatchObject({ type: "text", content: "hello" });
    expect(streamed).toMatchObject({ type: "final", response: { type: "text", content: "hello" } });
    expect(generated).toMatchObject({ response: "hello", done: true });
    expect(tags).toMatchObject({ models: [{ name: "test-model" }] });
    expect(new Set(s.requests.map((r) => r.path))).toEqual(new Set(["/api/tags", "/api/show", "/api/chat", "/api/generate"]));
    everyRequestCarried(s, "Bearer k");
  });

  it("without a key each call is the proxy's 401", async () => {
    const s = await serve("ollama", ["k"]);
    const client = new OllamaClient({ model: "test-model", baseUrl: s.baseUrl, logger: quiet });
    await expect401(() => client.listModels());
    await expect401(() => client.modelContextLength());
    await expect401(() => client.send(MESSAGES, TOOLS));
    await expect401(() => collect(client.sendStream(MESSAGES, TOOLS)));
    await expect401(() => client.forward("/api/show", { method: "POST", json: { model: "test-model" } }));
    expect(s.auths().every((a) => a === undefined)).toBe(true);
  });

  it("forward()'s apiKey and a request's apiKey win over the client's own", async () => {
    const s = await serve("ollama", ["caller"]);
    const client = new OllamaClient({ model: "test-model", baseUrl: s.baseUrl, apiKey: "operator", logger: quiet });
    await (await client.forward("/api/version", { method: "GET", apiKey: "caller" })).text();
    await client.send(MESSAGES, TOOLS, { request: { apiKey: "caller" } });
    await collect(client.sendStream(MESSAGES, TOOLS, { request: { apiKey: "caller" } }));
    everyRequestCarried(s, "Bearer caller");
    await expect401(() => client.forward("/api/version", { method: "GET" }));
  });
});

describe("OpenAICompatClient apiKey (vLLM --api-key)", () => {
  it("sends it on chat, stream, /models and the window it reads from /models", async () => {
    const s = await serve("vllm", ["k"]);
    const client = new OpenAICompatClient({ model: "test-model", baseUrl: s.baseUrl, apiKey: "k" });
    expect(await client.listModels()).toEqual([{ id: "test-model", ownedBy: "vllm", created: 1_700_000_000 }]);
    expect(await client.getContextLength()).toBe(KEYED_WINDOW);
    expect(await client.send(MESSAGES, TOOLS)).toMatchObject({ type: "text", content: "hello" });
    expect((await collect(client.sendStream(MESSAGES, TOOLS))).at(-1)).toMatchObject({ type: "final" });
    everyRequestCarried(s, "Bearer k");
    await expect401(() => new OpenAICompatClient({ model: "test-model", baseUrl: s.baseUrl }).send(MESSAGES));
  });
});

describe("the apiKey option", () => {
  it.each([
    ["OllamaClient", (apiKey: unknown) => new OllamaClient({ model: "m", apiKey } as never)],
    ["LlamafileClient", (apiKey: unknown) => new LlamafileClient({ model: "m", apiKey } as never)],
  ])("%s refuses a key that is not a non-empty string, naming the field", (_name, make) => {
    for (const bad of ["", 42, null, { key: "k" }]) {
      expect(() => make(bad)).toThrow(InvalidArgumentError);
      expect(() => make(bad)).toThrow("Invalid apiKey: must be a non-empty string");
    }
  });

  it("is not shown by inspect or JSON.stringify of a client", () => {
    for (const client of [new OllamaClient({ model: "m", apiKey: "sk-hidden" }), new LlamafileClient({ model: "m", apiKey: "sk-hidden" })]) {
      expect(inspect(client, { depth: 5 })).not.toContain("sk-hidden");
      expect(JSON.stringify(client)).not.toContain("sk-hidden");
    }
  });
});
