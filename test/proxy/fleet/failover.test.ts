/**
 * Failover: a backend that cannot be reached, answers 5xx, or cuts a stream before its first
 * text is replaced by the next one serving the model, and the caller never knows. One that
 * could not connect is skipped while it is down. Once live text reached the caller there is no
 * going back: the caller gets the API's error event.
 */
import { createServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendJson } from "../../clients/support/fake-server.js";
import { ollamaStreamLines } from "../../clients/support/wire.js";
import { answer, ask, chat, contentOf, fakeBackend, fleetConfig, fleetProxy, refusedBackend, type FakeBackend } from "./support/fleet-rig.js";

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A TCP server that accepts and immediately resets every connection; counts them. */
async function resetter(): Promise<{ url: string; connections: () => number }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({ close: () => (sockets.forEach((s) => s.destroy()), server.close()) });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => count };
}

/** A config whose first backend is not a FakeBackend (a dead or resetting URL). */
function withBroken(url: string, live: FakeBackend, healthIntervalMs = 60_000) {
  const config = fleetConfig([live], { health: { intervalMs: healthIntervalMs, timeoutMs: 500 } });
  config.backends = { broken: { backend: "ollama", baseUrl: url, model: "broken-model", think: false }, ...config.backends };
  config.models.m!.backends = ["broken", live.name];
  return config;
}

const anthropicAsk = (url: string, body: Record<string, unknown>) =>
  fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", max_tokens: 16, ...body }) });

describe("failover before anything reached the caller", () => {
  it("connection refused: every request succeeds on the other backend, and /health names the dead one", async () => {
    const dead = await refusedBackend("dead");
    const live = await fakeBackend("live");
    const { url } = await fleetProxy(fleetConfig([dead, live], { health: { intervalMs: 60_000, timeoutMs: 500 } }));
    for (const stream of [false, true, false, true]) {
      const res = await chat(url, { messages: ask("hi"), stream });
      expect(res.status).toBe(200);
      expect(stream ? await res.text() : await contentOf(res)).toMatch(stream ? /"content":"hell"/ : /^hello from live$/);
    }
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      status: "degraded",
      backends: [
        { name: "dead", up: false, lastError: expect.stringMatching(/ECONNREFUSED|No usable HTTP answer/) },
        { name: "live", up: true },
      ],
    });
  });

  it("a backend that resets connections is marked down after one failure and skipped while down", async () => {
    const broken = await resetter();
    const live = await fakeBackend("live");
    const { url } = await fleetProxy(withBroken(broken.url, live));
    for (let i = 0; i < 6; i++) expect(await contentOf(await chat(url, { messages: ask(`r${i}`) }))).toBe("hello from live");
    expect(broken.connections()).toBe(1);
    expect(live.chats).toHaveLength(6);
  });

  it.each([
    ["OpenAI, plain", (url: string) => chat(url, { messages: ask("x") }), /hello from good/],
    ["OpenAI, streamed", (url: string) => chat(url, { messages: ask("x"), stream: true }), /"content":"hell"/],
    ["Anthropic, plain", (url: string) => anthropicAsk(url, { messages: ask("x") }), /hello from good/],
    ["Anthropic, streamed", (url: string) => anthropicAsk(url, { messages: ask("x"), stream: true }), /"text":"hell"/],
  ])("a 5xx moves the request to the next backend (%s), which stays up", async (_name, send, body) => {
    const bad = await fakeBackend("bad", (_req, res) => sendJson(res, 503, { error: "model is loading" }));
    const good = await fakeBackend("good");
    const { url } = await fleetProxy(fleetConfig([bad, good]));
    for (let i = 0; i < 3; i++) {
      const res = await send(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(body);
    }
    expect(bad.chats.length).toBeGreaterThanOrEqual(1);
    expect(good.chats).toHaveLength(3);
    const health = await fetch(`${url}/health`);
    expect([health.status, ((await health.json()) as { status: string }).status]).toEqual([200, "ok"]); // it answers HTTP
  });

  it("a stream cut before its first text fails over", async () => {
    const cut = await fakeBackend("cut", (req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      const opening = { model: req.body.model, created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: "" }, done: false };
      res.write(`${JSON.stringify(opening)}\n`, () => setTimeout(() => res.socket?.destroy(), 10));
    });
    const good = await fakeBackend("good");
    const { url } = await fleetProxy(fleetConfig([cut, good]));
    const res = await chat(url, { messages: ask("x"), stream: true });
    const text = await res.text();
    expect(text).toMatch(/"content":"hell"/);
    expect(text).not.toMatch(/"error"/);
    expect(cut.chats).toHaveLength(1);
  });

  it("all backends failing: the last failure reaches the caller", async () => {
    const one = await fakeBackend("one", (_req, res) => sendJson(res, 500, { error: "first broke" }));
    const two = await fakeBackend("two", (_req, res) => sendJson(res, 502, { error: "second broke" }));
    const { url } = await fleetProxy(fleetConfig([one, two]));
    const res = await chat(url, { messages: ask("x") });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/broke/);
    expect(one.chats.length + two.chats.length).toBe(2);
  });

  it("a refusal of the request itself (400) is not retried elsewhere", async () => {
    const picky = await fakeBackend("picky", (_req, res) => sendJson(res, 400, { error: "prompt too long" }));
    const other = await fakeBackend("other");
    const { url } = await fleetProxy(fleetConfig([picky, other]));
    const res = await chat(url, { messages: ask("x") });
    expect(res.status).toBe(400);
    expect(other.chats).toHaveLength(0);
  });
});

describe("no failover once live text reached the caller", () => {
  it.each([
    ["OpenAI", (url: string) => chat(url, { messages: ask("x"), stream: true }), /data: \{"error":\{"type":"api_error","message":"Backend (unreachable|stream broke)/],
    ["Anthropic", (url: string) => anthropicAsk(url, { messages: ask("x"), stream: true }), /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/],
  ])("%s: the caller gets the text sent so far, then the error event; the other backend is not asked", async (_name, send, error) => {
    const dying = await fakeBackend("dying", (req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      const lines = ollamaStreamLines({ content: "The weather in Oslo is" }, String(req.body.model));
      res.write(lines.slice(0, 3).map((l) => `${JSON.stringify(l)}\n`).join(""), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const spare = await fakeBackend("spare", answer());
    const { url } = await fleetProxy(fleetConfig([dying, spare]));
    const res = await send(url);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/The |weat/);
    expect(text).toMatch(error);
    expect(spare.chats).toHaveLength(0);
    expect(dying.chats).toHaveLength(1);
  });
});
