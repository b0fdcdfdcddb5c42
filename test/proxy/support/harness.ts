/**
 * A proxy listening on a free loopback port in front of a loopback fake backend that speaks a
 * real wire format (Ollama /api/chat JSON + NDJSON, or OpenAI chat completions JSON + SSE).
 * The model's answers are scripted per backend request; both servers close after each test.
 * What the proxy asks about the backend's window (Ollama /api/show, llama-server /props,
 * GET /v1/models) is answered with `contextLength` (default 32,768) and is not a chat.
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
  /** Chat requests the backend received (model list and window questions excluded). */
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
export async function proxyRig(
  script: Script,
  options: { wire?: "ollama" | "openai"; proxy?: Partial<ProxyOptions>; client?: (url: string) => LLMClient; contextLength?: number } = {},
): Promise<Rig> {
  const wire = options.wire ?? "ollama";
  const contextLength = options.contextLength ?? 32_768;
  let n = 0;
  const backend = await startFakeServer((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "qwen3:8b", modified_at: "2026-01-01T00:00:00Z" }] });
    if (WINDOW_PATHS.has(req.path)) return sendJson(res, 200, windowAnswer(req.path, contextLength));
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
  return { url, proxy, backend, chats: () => backend.requests.filter((r) => r.method === "POST" && !WINDOW_PATHS.has(r.path)) };
}

/** Where the proxy asks a backend for its context window. */
export const WINDOW_PATHS: ReadonlySet<string> = new Set(["/api/show", "/props", "/v1/models"]);

/** The answer of each window path, as Ollama, llama-server and vLLM give it. */
export function windowAnswer(path: string, contextLength: number): Record<string, unknown> {
  if (path === "/api/show") return { details: { family: "qwen3" }, model_info: { "general.architecture": "qwen3", "qwen3.context_length": contextLength } };
  if (path === "/props") return { default_generation_settings: { n_ctx: contextLength } };
  return { object: "list", data: [{ id: "qwen3:8b", object: "model", owned_by: "vllm", max_model_len: contextLength }] };
}

export const hermes = (name: string, args: unknown) => `<tool_call>{"name": "${name}", "arguments": ${JSON.stringify(args)}}</tool_call>`;

export const WEATHER_SCHEMA = { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
