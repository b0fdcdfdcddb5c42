/**
 * A loopback node:http server on port 0, started per test, that records every request
 * (method, path, headers, parsed JSON body) and hands the response to a test-supplied handler.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body was JSON, the raw text otherwise ("" for none). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** `n` counts requests from 0 across the server's life. */
export type FakeHandler = (req: RecordedRequest, res: ServerResponse, n: number) => void | Promise<void>;

export interface FakeServer {
  /** e.g. "http://127.0.0.1:40123" (no trailing slash). */
  url: string;
  requests: RecordedRequest[];
  /** Requests whose path is `path`. */
  to(path: string): RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : "";
      } catch {
        // Not JSON: the test sees the raw text.
      }
      const recorded: RecordedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
      const n = requests.push(recorded) - 1;
      Promise.resolve(handler(recorded, res, n)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ── Response writers ──────────────────────────────────────────────────────────────────

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Ollama-style NDJSON; `end: false` leaves the stream open (a stall). */
export function sendNdjson(res: ServerResponse, lines: (unknown | string)[], options: { end?: boolean } = {}): void {
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  for (const line of lines) res.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`);
  if (options.end !== false) res.end();
}

/** OpenAI-style SSE: `data: <json>` events, then `data: [DONE]` unless `done: false`. */
export function sendSse(res: ServerResponse, events: (unknown | string)[], options: { done?: boolean; end?: boolean } = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) res.write(`data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`);
  if (options.done !== false) res.write("data: [DONE]\n\n");
  if (options.end !== false) res.end();
}

/** Drop the connection without any HTTP answer. */
export function resetConnection(res: ServerResponse): void {
  res.socket?.destroy();
}

/** Never answer: headers are not sent (a model "thinking" past the timeout). */
export function stallBeforeHeaders(_res: ServerResponse): void {
  // Intentionally nothing: the client's headersTimeout must fire.
}

/**
 * Per-test server lifecycle for a test file: the returned `serve(handler)` starts a server that
 * is closed after the test that started it.
 */
export function useFakeServers(): (handler: FakeHandler) => Promise<FakeServer> {
  const open: FakeServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return async (handler) => {
    const server = await startFakeServer(handler);
    open.push(server);
    return server;
  };
}
