/**
 * A loopback "Ollama" that plays one case's turn policy: the native API (`/api/version`,
 * `/api/tags`, `/api/show`, `/api/ps`, `/api/chat` NDJSON or JSON) and the compat APIs Ollama also serves
 * (`/v1/models`, `/v1/chat/completions`, `/v1/messages`, `/v1/responses`, each streamed or not).
 * Every request is recorded with the reply it got, for the case runner's diagnosis.
 */
import type { ServerResponse } from "node:http";
import { sendJson, sendNdjson, sendSse, startFakeServer, type FakeServer, type RecordedRequest } from "../../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents, type ModelReply } from "../../clients/support/wire.js";
import { anthropicMessage, anthropicSseFrames, responsesResponse, responsesSseFrames, sseText, type SseFrame } from "./compat-wire.js";
import { viewRequest, type Dialect } from "./request-view.js";
import { answer, type CaseName } from "./turn-policy.js";

export const MODEL = "qwen3:8b";
const CONTEXT_LENGTH = 40_960;

/** One chat request as the model saw it: which API, the tools offered, what it answered. */
export interface ModelTurnRecord {
  path: string;
  stream: boolean;
  tools: string[];
  reply: ModelReply;
}

export interface FakeOllama {
  url: string;
  /** Chat requests in arrival order (model lists and shows excluded). */
  turns: ModelTurnRecord[];
  /** Every request's method and path, for diagnosis. */
  paths(): string[];
  /** Every request as received (bodies parsed). */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const CHAT_PATHS: Record<string, Dialect> = {
  "/api/chat": "ollama",
  "/v1/chat/completions": "openai",
  "/v1/messages": "anthropic",
  "/v1/responses": "responses",
};

function sendFrames(res: ServerResponse, frames: readonly SseFrame[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.end(sseText(frames));
}

function reply(res: ServerResponse, dialect: Dialect, stream: boolean, r: ModelReply): void {
  if (dialect === "ollama") return stream ? sendNdjson(res, ollamaStreamLines(r, MODEL)) : sendJson(res, 200, ollamaChat(r, MODEL));
  if (dialect === "openai") return stream ? sendSse(res, openaiSseEvents(r, MODEL)) : sendJson(res, 200, openaiCompletion(r, MODEL));
  if (dialect === "anthropic") return stream ? sendFrames(res, anthropicSseFrames(r, MODEL)) : sendJson(res, 200, anthropicMessage(r, MODEL));
  return stream ? sendFrames(res, responsesSseFrames(r, MODEL)) : sendJson(res, 200, responsesResponse(r, MODEL));
}

function serveInfo(req: RecordedRequest, res: ServerResponse): boolean {
  const path = req.path.split("?")[0]!;
  const details = { family: "qwen3", parameter_size: "8.2B", quantization_level: "Q4_K_M", format: "gguf" };
  if (path === "/" || path === "/api/version") {
    if (path === "/") res.writeHead(200, { "content-type": "text/plain" }).end("Ollama is running");
    else sendJson(res, 200, { version: "0.14.0" });
  } else if (path === "/api/tags") {
    sendJson(res, 200, { models: [{ name: MODEL, model: MODEL, modified_at: "2026-01-01T00:00:00Z", size: 5_225_000_000, digest: "0".repeat(64), details }] });
  } else if (path === "/api/show") {
    sendJson(res, 200, { details, model_info: { "general.architecture": "qwen3", "qwen3.context_length": CONTEXT_LENGTH }, capabilities: ["completion", "tools"], parameters: "", template: "" });
  } else if (path === "/api/ps") {
    sendJson(res, 200, { models: [{ name: MODEL, model: MODEL, size: 5_225_000_000, digest: "0".repeat(64), details, expires_at: "2026-01-01T00:05:00Z", size_vram: 5_225_000_000, context_length: CONTEXT_LENGTH }] });
  } else if (path === "/v1/models") {
    sendJson(res, 200, { object: "list", data: [{ id: MODEL, object: "model", created: 1_700_000_000, owned_by: "library" }] });
  } else if (path.startsWith("/v1/models/")) {
    sendJson(res, 200, { id: MODEL, object: "model", created: 1_700_000_000, owned_by: "library" });
  } else if (path === "/v1/messages/count_tokens") {
    sendJson(res, 200, { input_tokens: Math.ceil(JSON.stringify(req.body).length / 4) });
  } else {
    return false;
  }
  return true;
}

/**
 * @example
 * const model = await startFakeOllama("hermes", "/tmp/case-1");
 * // point an agent (or the proxy's OllamaClient) at model.url, then read model.turns
 */
export async function startFakeOllama(kase: CaseName, workdir: string): Promise<FakeOllama> {
  const turns: ModelTurnRecord[] = [];
  const server: FakeServer = await startFakeServer((req, res) => {
    if (serveInfo(req, res)) return;
    const dialect = CHAT_PATHS[req.path.split("?")[0]!];
    if (req.method !== "POST" || dialect === undefined || typeof req.body !== "object") {
      return sendJson(res, 404, { error: `fake ollama: no route for ${req.method} ${req.path}` });
    }
    const view = viewRequest(dialect, req.body);
    // Ollama's /api/chat streams unless told not to; the compat APIs stream only when asked.
    const stream = dialect === "ollama" ? req.body.stream !== false : req.body.stream === true;
    const r = answer(kase, view, workdir);
    turns.push({ path: req.path, stream, tools: view.tools.map((t) => t.name), reply: r });
    reply(res, dialect, stream, r);
  });
  return { url: server.url, turns, paths: () => server.requests.map((r) => `${r.method} ${r.path}`), requests: server.requests, close: () => server.close() };
}
