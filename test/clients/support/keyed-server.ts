/**
 * A loopback backend that wants a key, as llama-server started with `--api-key`, vLLM with
 * `--api-key`, or Ollama behind an authenticating reverse proxy (nginx, Caddy, Open WebUI)
 * answer: 401 with llama.cpp's error body to any request without `Authorization: Bearer <key>`
 * of one of `keys`, and the backend's real wire format to one with it. Every path it serves is
 * one a client asks: chat (JSON and streamed), the model list, /props, /apply-template,
 * /tokenize (llama-server); /api/chat, /api/tags, /api/show, /api/generate, /api/version (Ollama).
 */
import type { ServerResponse } from "node:http";
import { afterEach } from "vitest";
import { sendJson, sendNdjson, sendSse, startFakeServer, type FakeServer, type RecordedRequest } from "./fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents, type ModelReply } from "./wire.js";

export type KeyedKind = "llamaserver" | "vllm" | "ollama";

export interface KeyedServer extends FakeServer {
  /** What the client is given as its base URL (`…/v1` for the OpenAI-compatible kinds). */
  baseUrl: string;
  /** The `authorization` header of each request, in order (undefined: none sent). */
  auths(): (string | undefined)[];
  /** Requests answered 401. */
  refused(): RecordedRequest[];
}

export const UNAUTHORIZED = { error: { code: 401, message: "Invalid API Key", type: "authentication_error" } };

/** The n_ctx /props reports, and the context length /api/show and vLLM's /models report. */
export const KEYED_WINDOW = 8192;

/**
 * @example
 * const server = await keyedServer("llamaserver", ["k"]);
 * await new LlamafileClient({ model: "m", baseUrl: server.baseUrl, apiKey: "k" }).send(messages); // 200
 */
export async function keyedServer(kind: KeyedKind, keys: readonly string[], reply: ModelReply = { content: "hello" }): Promise<KeyedServer> {
  const refused: RecordedRequest[] = [];
  const server = await startFakeServer((req, res) => {
    const auth = req.headers.authorization;
    if (auth === undefined || !keys.some((k) => auth === `Bearer ${k}`)) {
      refused.push(req);
      return sendJson(res, 401, UNAUTHORIZED);
    }
    return kind === "ollama" ? ollama(req, res, reply) : openai(kind, req, res, reply);
  });
  return Object.assign(server, {
    baseUrl: kind === "ollama" ? server.url : `${server.url}/v1`,
    auths: () => server.requests.map((r) => r.headers.authorization),
    refused: () => refused,
  });
}

/** Per-test lifecycle, as useFakeServers: each server started is closed after its test. */
export function useKeyedServers(): typeof keyedServer {
  const open: FakeServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return async (kind, keys, reply) => {
    const server = await keyedServer(kind, keys, reply);
    open.push(server);
    return server;
  };
}

function openai(kind: KeyedKind, req: RecordedRequest, res: ServerResponse, reply: ModelReply): void {
  const model = typeof req.body?.model === "string" ? req.body.model : "test-model";
  switch (req.path) {
    case "/v1/chat/completions":
      return req.body.stream ? sendSse(res, openaiSseEvents(reply, model)) : sendJson(res, 200, openaiCompletion(reply, model));
    case "/v1/models":
      return sendJson(res, 200, { object: "list", data: [{ id: "test-model", object: "model", created: 1_700_000_000, owned_by: kind === "vllm" ? "vllm" : "llamacpp", ...(kind === "vllm" ? { max_model_len: KEYED_WINDOW } : {}) }] });
  }
  if (kind === "llamaserver") {
    if (req.path === "/props") return sendJson(res, 200, { default_generation_settings: { n_ctx: KEYED_WINDOW }, total_slots: 1 });
    if (req.path === "/apply-template") return sendJson(res, 200, { prompt: `<|im_start|>user\n${JSON.stringify(req.body.messages)}<|im_end|>` });
    if (req.path === "/tokenize") return sendJson(res, 200, { tokens: Array.from({ length: Math.ceil(String(req.body.content).length / 4) }, (_, i) => i) });
  }
  sendJson(res, 404, { error: { code: 404, message: "File Not Found", type: "not_found_error" } });
}

function ollama(req: RecordedRequest, res: ServerResponse, reply: ModelReply): void {
  const model = typeof req.body?.model === "string" ? req.body.model : "test-model";
  switch (req.path) {
    case "/api/chat":
      return req.body.stream === false ? sendJson(res, 200, ollamaChat(reply, model)) : sendNdjson(res, ollamaStreamLines(reply, model));
    case "/api/tags":
      return sendJson(res, 200, { models: [{ name: "test-model", model: "test-model", modified_at: "2026-01-01T00:00:00Z", size: 1 }] });
    case "/api/show":
      return sendJson(res, 200, { model_info: { "general.architecture": "qwen3", "qwen3.context_length": KEYED_WINDOW }, capabilities: ["completion", "tools"] });
    case "/api/generate":
      return sendJson(res, 200, { model, created_at: "2026-01-01T00:00:00Z", response: reply.content ?? "", done: true, done_reason: "stop" });
    case "/api/version":
      return sendJson(res, 200, { version: "0.12.0" });
  }
  sendJson(res, 404, { error: "404 page not found" });
}
