import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkUrl, httpCall, joinUrl, mapTransportError, postJson } from "../../src/clients/http.js";
import { BackendError } from "../../src/core/errors.js";
import { sendJson, startFakeServer, type FakeServer } from "./support/fake-server.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("http helpers", () => {
  it("joinUrl keeps exactly one slash", () => {
    expect(joinUrl("http://h:1/v1/", "/chat/completions")).toBe("http://h:1/v1/chat/completions");
    expect(joinUrl("http://h:1", "props")).toBe("http://h:1/props");
  });

  it("checkUrl strips trailing slashes and rejects relative URLs", () => {
    expect(checkUrl("http://h:1/v1/", "baseUrl")).toBe("http://h:1/v1");
    expect(() => checkUrl("h:1", "baseUrl")).toThrow(/baseUrl/);
  });

  it("mapTransportError: timeouts → 408, socket errors → 0, aborts untouched", () => {
    const timeout = Object.assign(new Error("Body Timeout Error"), { code: "UND_ERR_BODY_TIMEOUT" });
    expect(mapTransportError(timeout, "u")).toMatchObject({ statusCode: 408, cause: timeout });
    const reset = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    expect(mapTransportError(reset, "u")).toMatchObject({ statusCode: 0, cause: reset });
    const abort = new DOMException("This operation was aborted", "AbortError");
    expect(mapTransportError(abort, "u")).toBe(abort);
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    expect(mapTransportError(reset, "u", controller.signal)).toBe(reason);
  });

  it("postJson sends JSON, parses JSON; a non-JSON 2xx body is a BackendError with the body", async () => {
    server = await startFakeServer((req, res, n) => (n === 0 ? sendJson(res, 200, { echo: req.body }) : sendJson(res, 200, "<html>")));
    expect(await postJson(`${server.url}/x`, { a: 1 }, { timeoutMs: 1000 })).toEqual({ echo: { a: 1 } });
    expect(server.requests[0]!.headers["content-type"]).toBe("application/json");
    await expect(postJson(`${server.url}/x`, {}, { timeoutMs: 1000 })).rejects.toMatchObject({ statusCode: 200, body: "<html>" });
  });

  it("a non-2xx answer carries status and body text", async () => {
    server = await startFakeServer((_req, res) => sendJson(res, 503, { error: "loading model" }));
    const error = await httpCall(`${server.url}/x`, { timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect(error).toMatchObject({ statusCode: 503, body: '{"error":"loading model"}' });
  });

  it("a non-2xx answer with an empty body says so in its message", async () => {
    server = await startFakeServer((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    const error = await httpCall(`${server.url}/x`, { timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 404, body: "", message: "Backend answered HTTP 404: (empty body)" });
  });

  it("an already-aborted signal rejects before any request", async () => {
    server = await startFakeServer((_req, res) => sendJson(res, 200, {}));
    await expect(httpCall(`${server.url}/x`, { timeoutMs: 1000, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
    expect(server.requests).toHaveLength(0);
  });
});

describe("a body its consumer stops reading early", () => {
  /** A server that writes `chunks` (one write each) and then ends, or holds the answer open. */
  async function chunkServer(chunks: readonly string[], end: boolean) {
    const sockets = new Set<unknown>();
    const closed: Promise<void>[] = [];
    const srv = createServer((_req, res) => {
      closed.push(new Promise((resolve) => res.on("close", () => resolve())));
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const c of chunks) res.write(c);
      if (end) res.end();
    });
    srv.on("connection", (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/x`;
    return {
      url,
      sockets,
      closed,
      close: () => new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
    };
  }

  // One connection per origin: a request waits for the previous one's socket, so whether that
  // socket was kept or cut shows in the count of connections the server saw.
  let previous: Dispatcher | undefined;
  beforeEach(() => {
    previous = getGlobalDispatcher();
    setGlobalDispatcher(new Agent({ connections: 1 }));
  });
  afterEach(async () => {
    const mine = getGlobalDispatcher();
    setGlobalDispatcher(previous!);
    await mine.close();
  });

  async function firstChunk(url: string, signal?: AbortSignal): Promise<void> {
    const res = await httpCall(url, { timeoutMs: 5_000, ...(signal ? { signal } : {}) });
    for await (const _chunk of res.body) break;
  }

  it("after the answer's last event: the rest is read and the connection serves the next request", async () => {
    const s = await chunkServer(["data: {}\n\n", "data: [DONE]\n\n"], true);
    try {
      for (let i = 0; i < 3; i++) await firstChunk(s.url);
      expect(s.sockets.size).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("a backend still generating is cut", async () => {
    const s = await chunkServer(["data: {}\n\n"], false);
    try {
      await firstChunk(s.url);
      await firstChunk(s.url);
      await Promise.all(s.closed); // each answer ends only when the client gives its body up
      expect(s.sockets.size).toBe(2); // the cut connection was not reused
    } finally {
      await s.close();
    }
  });

  it("an aborted request's body is cut at once", async () => {
    const s = await chunkServer(["data: {}\n\n"], false);
    try {
      const controller = new AbortController();
      const res = await httpCall(s.url, { timeoutMs: 5_000, signal: controller.signal });
      const reading = (async () => {
        for await (const _chunk of res.body) controller.abort("caller gone");
      })();
      await expect(reading).rejects.toBeDefined();
      await s.closed[0];
    } finally {
      await s.close();
    }
  });
});
