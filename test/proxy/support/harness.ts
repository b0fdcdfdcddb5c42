/**
 * A proxy listening on a free loopback port in front of a loopback fake backend that speaks a
 * real wire format (Ollama /api/chat JSON + NDJSON, or OpenAI chat completions JSON + SSE).
 * The model's answers are scripted per backend request; both servers close after each test.
 */
import { afterEach } from "vitest";
import { OllamaClient } from "../../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../../src/clients/openai-compat.js";
import type { LLMClient } from "../../../src/core/llm.js";
import { createProxy, type ProxyOptions, type ProxyServer } from "../../../src/proxy/create-proxy.js";
import { sendJson, sendNdjson, sendSse, startFakeServer, type FakeServer, type RecordedRequest } from "../../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents, type ModelReply } from "../../clients/support/wire.js";

export interface Rig {
  /** The proxy's base URL, e.g. http://127.0.0.1:40123 (OpenAI SDKs add /v1). */
  url: string;
  proxy: ProxyServer;
  backend: FakeServer;
  /** Chat requests the backend received (model list calls excluded). */
  chats(): RecordedRequest[];
}

export type Script = ModelReply[] | ((n: number, req: RecordedRequest) => ModelReply);

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/**
 * @example
 * const rig = await proxyRig([{ content: '<tool_call>{"name":"get_weather","arguments":{"city":"Oslo"}}</tool_call>' }]);
 */
export async function proxyRig(script: Script, options: { wire?: "ollama" | "openai"; proxy?: Partial<ProxyOptions>; client?: (url: string) => LLMClient } = {}): Promise<Rig> {
  const wire = options.wire ?? "ollama";
  let n = 0;
  const backend = await startFakeServer((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "qwen3:8b", modified_at: "2026-01-01T00:00:00Z" }] });
    const index = n++;
    const reply = typeof script === "function" ? script(index, req) : script[index];
    if (!reply) return sendJson(res, 500, { error: `no scripted reply for request ${index}` });
    if (wire === "ollama") return req.body.stream ? sendNdjson(res, ollamaStreamLines(reply, "qwen3:8b")) : sendJson(res, 200, ollamaChat(reply, "qwen3:8b"));
    return req.body.stream ? sendSse(res, openaiSseEvents(reply, "qwen3:8b")) : sendJson(res, 200, openaiCompletion(reply, "qwen3:8b"));
  });
  open.push(backend);
  const client =
    options.client?.(backend.url) ??
    (wire === "ollama" ? new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url, think: true }) : new OpenAICompatClient({ model: "qwen3:8b", baseUrl: `${backend.url}/v1` }));
  const proxy = createProxy({ client, ...options.proxy });
  const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
  open.push(proxy);
  return { url, proxy, backend, chats: () => backend.requests.filter((r) => r.method === "POST") };
}

export const hermes = (name: string, args: unknown) => `<tool_call>{"name": "${name}", "arguments": ${JSON.stringify(args)}}</tool_call>`;

export const WEATHER_SCHEMA = { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
