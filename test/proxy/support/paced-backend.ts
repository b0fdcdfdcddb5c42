/**
 * A loopback model that streams its reply one wire line at a time, each line only when the test
 * lets it (`release()`), speaking Ollama NDJSON or OpenAI SSE. Lets a streaming test say "the
 * client saw this delta before the backend finished" by ordering, never by the clock.
 */
import { afterEach } from "vitest";
import type { ServerResponse } from "node:http";
import { OllamaClient } from "../../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../../src/clients/openai-compat.js";
import { createProxy, type ProxyOptions, type ProxyServer } from "../../../src/proxy/create-proxy.js";
import { sendJson, startFakeServer, type RecordedRequest } from "../../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents, type ModelReply } from "../../clients/support/wire.js";
import { WINDOW_PATHS, windowAnswer } from "./harness.js";

export interface PacedRig {
  url: string;
  proxy: ProxyServer;
  chats(): RecordedRequest[];
  /** What happened, in order: `backend:line`, `backend:end`, and whatever the test logs. */
  log: string[];
  /** Let the backend write up to `lines` more lines (Infinity: the rest of every reply). */
  release(lines?: number): void;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/**
 * @example
 * const rig = await pacedRig([{ content: "Hello there." }], "ollama");
 * rig.release(2); // the first two lines go out; the rest waits
 */
export async function pacedRig(script: ModelReply[], wire: "ollama" | "openai", proxy: Partial<ProxyOptions> = {}): Promise<PacedRig> {
  const log: string[] = [];
  let allowance = 0;
  let wake: (() => void) | undefined;
  const allowed = async () => {
    while (allowance <= 0) await new Promise<void>((resolve) => (wake = resolve));
    allowance--;
  };
  let n = 0;
  const backend = await startFakeServer(async (req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "qwen3:8b", modified_at: "2026-01-01T00:00:00Z" }] });
    if (WINDOW_PATHS.has(req.path)) return sendJson(res, 200, windowAnswer(req.path, 32_768));
    const reply = script[n++];
    if (!reply) return sendJson(res, 500, { error: "no scripted reply" });
    if (!req.body.stream) return sendJson(res, 200, wire === "ollama" ? ollamaChat(reply, "qwen3:8b") : openaiCompletion(reply, "qwen3:8b"));
    await streamPaced(res, wire, reply, allowed, log);
  });
  open.push(backend);
  const client = wire === "ollama" ? new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url, think: true }) : new OpenAICompatClient({ model: "qwen3:8b", baseUrl: `${backend.url}/v1` });
  const server = createProxy({ client, ...proxy });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  open.push(server);
  return {
    url,
    proxy: server,
    log,
    chats: () => backend.requests.filter((r) => r.method === "POST" && !WINDOW_PATHS.has(r.path)),
    release(lines = Number.POSITIVE_INFINITY) {
      allowance += lines;
      wake?.();
    },
  };
}

async function streamPaced(res: ServerResponse, wire: "ollama" | "openai", reply: ModelReply, allowed: () => Promise<void>, log: string[]): Promise<void> {
  const lines = wire === "ollama" ? ollamaStreamLines(reply, "qwen3:8b").map((l) => `${JSON.stringify(l)}\n`) : [...openaiSseEvents(reply, "qwen3:8b").map((e) => `data: ${JSON.stringify(e)}\n\n`), "data: [DONE]\n\n"];
  res.writeHead(200, { "content-type": wire === "ollama" ? "application/x-ndjson" : "text/event-stream" });
  for (const line of lines) {
    await allowed();
    res.write(line);
    log.push("backend:line");
  }
  res.end();
  log.push("backend:end");
}
