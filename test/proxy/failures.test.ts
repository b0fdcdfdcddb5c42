/**
 * What a caller gets when the request or the backend is bad: the API's own error shape and a
 * status that says whose fault it is, streamed or not; the backend never sees a bad request.
 */
import { describe, expect, it } from "vitest";
import { REFUSED_URL } from "../support/refused-url.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { resetConnection, sendJson, sendNdjson, stallBeforeHeaders, useFakeServers, type FakeHandler } from "../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines } from "../clients/support/wire.js";
import { proxyRig, WEATHER_SCHEMA } from "./support/harness.js";

const serve = useFakeServers();
const user = [{ role: "user", content: "hi" }];
const ENDPOINTS = [
  ["openai", "/v1/chat/completions", { model: "m", messages: user }],
  ["anthropic", "/v1/messages", { model: "m", max_tokens: 16, messages: user }],
] as const;

function post(url: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** The body in the dialect's error shape, with its type and message. */
async function errorOf(res: Response, dialect: "openai" | "anthropic"): Promise<{ type: string; message: string }> {
  const body = (await res.json()) as Record<string, unknown>;
  if (dialect === "anthropic") {
    expect(body.type).toBe("error");
  } else {
    expect(Object.keys(body)).toEqual(["error"]);
  }
  const error = body.error as { type: string; message: string };
  expect(typeof error.message).toBe("string");
  return error;
}

describe.each(ENDPOINTS)("bad input on the %s endpoint", (dialect, path, good) => {
  it.each([
    ["malformed JSON", '{"model": "m", "messages": [', 400, /JSON/i],
    ["a JSON array", "[1, 2]", 400, /object/i],
    ["missing messages", { model: "m", max_tokens: 16 }, 400, /messages/],
    ["wrong types", { ...good, messages: "hi" }, 400, /messages/],
    ['stream: "yes"', { ...good, stream: "yes" }, 400, /stream/],
    ["JSON nested 100,000 deep", `{"model": "m", "messages": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`, 400, /nested|deep/i],
    ["tool_choice naming a tool not offered", dialect === "openai"
      ? { ...good, tools: [{ type: "function", function: { name: "a", parameters: WEATHER_SCHEMA } }], tool_choice: { type: "function", function: { name: "b" } } }
      : { ...good, tools: [{ name: "a", input_schema: WEATHER_SCHEMA }], tool_choice: { type: "tool", name: "b" } }, 400, /"b"/],
    ["an invalid tool schema", dialect === "openai"
      ? { ...good, tools: [{ type: "function", function: { name: "a", parameters: { type: "object", properties: { x: { type: "nonsense" } } } } }] }
      : { ...good, tools: [{ name: "a", input_schema: { type: "object", properties: { x: { type: "nonsense" } } } }] }, 400, /schema/i],
  ] as const)("%s", async (_name, body, status, message) => {
    const rig = await proxyRig([]);
    const res = await post(`${rig.url}${path}`, body as string | Record<string, unknown>);
    expect(res.status).toBe(status);
    expect((await errorOf(res, dialect)).message).toMatch(message);
    expect(rig.chats()).toHaveLength(0);
    expect(rig.proxy.stats().rejected).toBe(1);
  });

  it("a 17 MB body → 413, and a custom limit holds", async () => {
    const rig = await proxyRig([]);
    const big = JSON.stringify({ ...good, messages: [{ role: "user", content: "x".repeat(17 * 1024 * 1024) }] });
    const res = await post(`${rig.url}${path}`, big);
    expect(res.status).toBe(413);
    expect((await errorOf(res, dialect)).type).toBe("request_too_large");
    const small = await proxyRig([], { proxy: { bodyLimitBytes: 1024 } });
    expect((await post(`${small.url}${path}`, { ...good, messages: [{ role: "user", content: "y".repeat(2000) }] })).status).toBe(413);
    expect(rig.chats()).toHaveLength(0);
  });

  it("a missing or wrong API key → 401 (Bearer and x-api-key both work; /health stays open)", async () => {
    const rig = await proxyRig([{ content: "a" }, { content: "b" }], { proxy: { apiKey: "s3cret" } });
    const url = `${rig.url}${path}`;
    expect((await errorOf(await post(url, good), dialect)).type).toBe("authentication_error");
    const wrong = await post(url, good, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect((await errorOf(wrong, dialect)).message).toBe("Invalid API key");
    expect((await post(url, good, { authorization: "Bearer s3cret" })).status).toBe(200);
    expect((await post(url, good, { "x-api-key": "s3cret" })).status).toBe(200);
    expect((await fetch(`${rig.url}/health`)).status).toBe(200);
    expect((await fetch(`${rig.url}/forge/stats`)).status).toBe(401);
  });
});

describe("routing", () => {
  it("unknown endpoint → 404 in the OpenAI shape; ?beta=true is ignored on /v1/messages", async () => {
    const rig = await proxyRig([{ content: "ok" }]);
    const res = await post(`${rig.url}/v1/completions`, { prompt: "x" });
    expect(res.status).toBe(404);
    expect((await errorOf(res, "openai")).type).toBe("not_found_error");
    const beta = await post(`${rig.url}/v1/messages?beta=true`, { model: "m", max_tokens: 8, messages: user });
    expect(beta.status).toBe(200);
  });

  it("GET /v1/models forwards the backend's list in either shape", async () => {
    const rig = await proxyRig([]);
    const openai = (await (await fetch(`${rig.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(openai.data.map((m) => m.id)).toEqual(["qwen3:8b"]);
    const anthropic = (await (await fetch(`${rig.url}/v1/models`, { headers: { "anthropic-version": "2023-06-01" } })).json()) as { data: { type: string; id: string }[] };
    expect(anthropic.data).toEqual([expect.objectContaining({ type: "model", id: "qwen3:8b" })]);
  });
});

async function behind(handler: FakeHandler | "dead", timeoutMs = 5_000) {
  const baseUrl = handler === "dead" ? REFUSED_URL : (await serve(handler)).url;
  const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl, think: false, timeoutMs }), keepAliveMs: 60_000 });
  const { url } = await proxy.listen({ port: 0 });
  return { url, proxy, close: () => proxy.close() };
}

const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_SCHEMA } }];

describe.each([false, true])("backend failures, stream %s", (stream) => {
  const cases: [string, FakeHandler | "dead", number, RegExp, number?][] = [
    ["down", "dead", 502, /unreachable/i],
    ["answering 500", (_req, res) => sendJson(res, 500, { error: "model crashed" }), 502, /model crashed/],
    ["stalling past the client timeout", (_req, res) => stallBeforeHeaders(res), 504, /did not answer in time/i, 300],
    ["resetting the connection", (_req, res) => resetConnection(res), 502, /unreachable|socket|reset/i],
    ["truncating its answer", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
      res.write('{"model": "qwen3:8b", "message": {"ro', () => res.socket?.destroy());
    }, 502, /Backend unreachable.*(closed|terminated|socket)/i],
    ["refusing the request (400 context too long)", (_req, res) => sendJson(res, 400, { error: "prompt too long" }), 400, /prompt too long/],
  ];
  it.each(cases)("backend %s", async (_name, handler, status, message, timeoutMs) => {
    const p = await behind(handler, timeoutMs);
    try {
      for (const tools of [undefined, TOOLS]) {
        const res = await post(`${p.url}/v1/chat/completions`, { model: "qwen3:8b", messages: user, stream, ...(tools ? { tools } : {}) });
        // Headers wait for something worth sending, so even a stream gets the real status.
        expect(res.status).toBe(status);
        expect((await errorOf(res, "openai")).message).toMatch(message);
      }
      expect(p.proxy.stats().failed).toBe(2);
    } finally {
      await p.close();
    }
  });
});

describe("failures after a stream has started", () => {
  it("an unguarded stream cut mid-way ends with an error event in the dialect's shape", async () => {
    const lines = ollamaStreamLines({ content: "The weather in Oslo is" }, "qwen3:8b");
    const p = await behind((_req, res) => sendNdjson(res, lines.slice(0, 3), { end: true }));
    try {
      for (const [path, body, pattern] of [
        ["/v1/chat/completions", { model: "qwen3:8b", messages: user, stream: true }, /data: \{"error":\{"type":"api_error","message":"Backend stream broke/],
        ["/v1/messages", { model: "qwen3:8b", max_tokens: 16, messages: user, stream: true }, /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"Backend stream broke/],
      ] as const) {
        const res = await post(`${p.url}${path}`, body);
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).toContain("The "); // the live text already sent
        expect(text).toMatch(pattern);
      }
    } finally {
      await p.close();
    }
  });

  it("a guarded stream cut after its prose went out ends with an error event (the prose cannot be taken back)", async () => {
    const lines = ollamaStreamLines({ content: "The weather in Oslo is" }, "qwen3:8b");
    const p = await behind((_req, res) => sendNdjson(res, lines.slice(0, 3), { end: true }));
    try {
      const tools = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_SCHEMA } }];
      const res = await post(`${p.url}/v1/chat/completions`, { model: "qwen3:8b", messages: user, stream: true, tools });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('"content":"The'); // released live before the stream broke
      expect(text).toMatch(/data: \{"error":\{"type":"api_error","message":"Backend stream broke/);
    } finally {
      await p.close();
    }
  });

  it("a guarded stream whose backend fails after keep-alives started gets an error event", async () => {
    const backend = await serve((_req, res) => {
      setTimeout(() => sendJson(res, 503, { error: "overloaded" }), 150);
    });
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url, think: false }), keepAliveMs: 20 });
    const { url } = await proxy.listen({ port: 0 });
    try {
      const res = await post(`${url}/v1/messages`, { model: "qwen3:8b", max_tokens: 16, messages: user, stream: true, tools: [{ name: "get_weather", input_schema: WEATHER_SCHEMA }] });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain("event: ping");
      expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"Backend failed: .*overloaded/);
    } finally {
      await proxy.close();
    }
  });

  it("the backend's own answer is untouched when it is fine (control)", async () => {
    const p = await behind((_req, res) => sendJson(res, 200, ollamaChat({ content: "fine" }, "qwen3:8b")));
    try {
      const res = await post(`${p.url}/v1/chat/completions`, { model: "qwen3:8b", messages: user });
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("fine");
    } finally {
      await p.close();
    }
  });
});
