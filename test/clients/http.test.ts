import { afterEach, describe, expect, it } from "vitest";
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
