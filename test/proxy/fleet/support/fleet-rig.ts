/**
 * Several loopback fake Ollama backends (real /api/chat JSON and NDJSON, /api/tags) that can be
 * held, killed (listener closed, every socket destroyed, the port kept by a listener that resets
 * every connection) and revived on the same port, and a
 * proxy in front of them built from a fleet config. Everything closes after each test.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from "node:net";
import { afterEach, vi } from "vitest";
import { createProxy, type ProxyOptions, type ProxyServer } from "../../../../src/proxy/create-proxy.js";
import type { ProxyConfig } from "../../../../src/proxy/fleet/proxy-config.js";
import { sendJson, type RecordedRequest } from "../../../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines, type ModelReply } from "../../../clients/support/wire.js";
import { windowAnswer } from "../../support/harness.js";
import { REFUSED_URL } from "../../../support/refused-url.js";

export type Behaviour = (req: RecordedRequest, res: ServerResponse, backend: FakeBackend) => void | Promise<void>;

export interface FakeBackend {
  name: string;
  url: string;
  /** Chat requests received, in order. */
  chats: RecordedRequest[];
  /** Chat requests open now, and the most ever open at once. */
  active: number;
  maxActive: number;
  /** /api/tags calls (health probes). */
  probes: number;
  /** The model's window /api/show reports (default 32,768; set it before the first request). */
  contextLength: number;
  /** /api/show calls (the proxy learning the window). */
  windowQuestions: number;
  /** Markers (see `marker`) of streams this backend wrote text for. */
  streamed: Set<string>;
  /** Answers wait for this (see `hold`). */
  gate: Promise<void>;
  alive: boolean;
  kill(): Promise<void>;
  revive(): Promise<void>;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** The user message's text: tests tag each request with a marker the backend can read back. */
export const marker = (req: RecordedRequest): string => String(req.body?.messages?.at?.(-1)?.content ?? "");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Answer as the model would: `text` whole, or streamed in pieces `pieceMs` apart. The answer
 * waits for `gate` (default the backend's, see `hold`) before it starts, or, for a stream given
 * `gateAfterPieces`, after that many lines went out: a stream held mid-answer.
 */
export async function reply(
  req: RecordedRequest,
  res: ServerResponse,
  backend: FakeBackend,
  content: ModelReply,
  o: { delayMs?: number; pieceMs?: number; gate?: Promise<void>; gateAfterPieces?: number } = {},
): Promise<void> {
  const gate = o.gate ?? backend.gate;
  const midStream = req.body.stream === true && o.gateAfterPieces !== undefined;
  if (!midStream) await gate;
  if (o.delayMs) await sleep(o.delayMs);
  if (res.destroyed) return;
  const model = String(req.body.model);
  if (!req.body.stream) return sendJson(res, 200, ollamaChat(content, model));
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  const lines = ollamaStreamLines(content, model);
  for (const [i, line] of lines.entries()) {
    if (res.destroyed) return;
    const text = (line as { message?: { content?: string } }).message?.content;
    if (text) backend.streamed.add(marker(req));
    if (i === lines.length - 1) return void res.end(`${JSON.stringify(line)}\n`);
    res.write(`${JSON.stringify(line)}\n`);
    if (midStream && i + 1 === o.gateAfterPieces) await gate;
    if (o.pieceMs) await sleep(o.pieceMs);
  }
}

/** Answers "hello from <name>" (after `delayMs`; streams in pieces `pieceMs` apart). */
export const answer =
  (o: { delayMs?: number; pieceMs?: number } = {}): Behaviour =>
  (req, res, backend) =>
    reply(req, res, backend, { content: `hello from ${backend.name}` }, o);

/**
 * A backend that refuses connections from the start (at REFUSED_URL), for tests that need one
 * down and never revive it.
 *
 * @example
 * const dead = await refusedBackend("gpu1"); // dead.url === "http://127.0.0.1:1"
 */
export async function refusedBackend(name: string): Promise<FakeBackend> {
  const backend = await fakeBackend(name);
  await backend.kill();
  backend.url = REFUSED_URL;
  return backend;
}

/**
 * @example
 * const gpu0 = await fakeBackend("gpu0", answer({ delayMs: 50 }));
 */
export async function fakeBackend(name: string, behaviour: Behaviour = answer()): Promise<FakeBackend> {
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const backend: FakeBackend = {
    name,
    url: "",
    chats: [],
    active: 0,
    maxActive: 0,
    probes: 0,
    contextLength: 32_768,
    windowQuestions: 0,
    streamed: new Set(),
    gate: Promise.resolve(),
    alive: false,
    async kill() {
      if (!backend.alive) return;
      backend.alive = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      // Dead, the port stays ours: a listener that resets every connection. Left free, another
      // server on a busy machine can take it at once and answer for the dead backend (and
      // revive would find it taken).
      holder = createTcpServer((socket) => socket.resetAndDestroy());
      await new Promise<void>((resolve, reject) => holder!.once("error", reject).listen(port, "127.0.0.1", resolve));
    },
    async revive() {
      await release();
      holder = undefined;
      await listen();
    },
  };
  let holder: TcpServer | undefined;
  const listen = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const recorded: RecordedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: text ? JSON.parse(text) : "" };
        if (recorded.path === "/api/tags") {
          backend.probes++;
          return sendJson(res, 200, { models: [{ name: `${name}-model`, modified_at: "2026-01-01T00:00:00Z" }] });
        }
        if (recorded.path === "/api/show") {
          backend.windowQuestions++;
          return sendJson(res, 200, windowAnswer("/api/show", backend.contextLength));
        }
        backend.chats.push(recorded);
        backend.active++;
        backend.maxActive = Math.max(backend.maxActive, backend.active);
        // "finish" (handed to the OS) comes before the proxy can read the last byte; "close" may come after.
        let done = false;
        const end = () => void (done || ((done = true), backend.active--));
        res.once("finish", end);
        res.once("close", end);
        Promise.resolve(behaviour(recorded, res, backend)).catch(() => res.destroy());
      });
    });
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    backend.url = `http://127.0.0.1:${port}`;
    backend.alive = true;
  };
  await listen();
  const release = () => new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  open.push({
    close: async () => {
      await backend.kill();
      await release();
    },
  });
  return backend;
}

/** Hold every answer of `backends` until the returned release is called. */
export function hold(...backends: FakeBackend[]): () => void {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  for (const b of backends) b.gate = gate;
  return release;
}

/** A config serving model "m" (alias "alias-m") from `backends` in order; each sends "<name>-model". */
export function fleetConfig(backends: FakeBackend[], extra: { maxConcurrent?: number; queue?: ProxyConfig["queue"]; health?: ProxyConfig["health"] } = {}): ProxyConfig {
  return {
    backends: Object.fromEntries(
      backends.map((b) => [b.name, { backend: "ollama" as const, baseUrl: b.url, model: `${b.name}-model`, think: false, ...(extra.maxConcurrent ? { maxConcurrent: extra.maxConcurrent } : {}) }]),
    ),
    models: { m: { backends: backends.map((b) => b.name), aliases: ["alias-m"] } },
    ...(extra.queue ? { queue: extra.queue } : {}),
    health: extra.health ?? { intervalMs: 50, timeoutMs: 500 },
  };
}

/** A proxy listening on a free port; closed after the test. */
export async function fleetProxy(config: ProxyConfig, options: Partial<ProxyOptions> = {}): Promise<{ url: string; proxy: ProxyServer }> {
  const proxy = createProxy({ config, ...options });
  const { url } = await proxy.listen({ port: 0 });
  open.push(proxy);
  return { url, proxy };
}

export const chat = (url: string, body: Record<string, unknown>) =>
  fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", ...body }) });

export const ask = (text: string) => [{ role: "user", content: text }];

/**
 * Wait until `predicate` holds (checked every 2 ms) and return what it returned, or fail after
 * `ms`: generous, since the deadline only matters when something is broken.
 */
export async function until<T>(predicate: () => T | Promise<T>, ms = 15_000): Promise<NonNullable<T>> {
  return vi.waitUntil(predicate, { timeout: ms, interval: 2 }) as Promise<NonNullable<T>>;
}

export const contentOf = async (res: Response) => ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
