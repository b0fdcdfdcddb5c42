/**
 * The proxy against the web, over its real socket, as an attacker's page would try it: a
 * cross-site form or text/plain POST, a DNS-rebinding Host, a foreign Origin on each door; and a
 * browser app on an origin named with `corsOrigins`, which gets CORS answers. The backend's
 * request count shows what reached the model.
 */
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { proxyRig, type Rig } from "./support/harness.js";

const body = JSON.stringify({ model: "qwen3:8b", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });

async function post(rig: Rig, path: string, headers: Record<string, string>, payload = body) {
  const res = await request(`${rig.url}${path}`, { method: "POST", headers, body: payload });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe("the proxy's browser guard (loopback bind)", () => {
  it.each(["/v1/chat/completions", "/v1/messages", "/v1/responses", "/api/chat"])("%s: a cross-site text/plain or form POST never reaches the model", async (path) => {
    const rig = await proxyRig([{ content: "hello" }]);
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      expect((await post(rig, path, { "content-type": type, origin: "http://evil.example" })).status).toBe(403);
      // Without an Origin (a non-browser client) the type alone is refused, before the model.
      const noOrigin = await post(rig, path, { "content-type": type });
      expect(noOrigin.status).toBe(415);
      expect(noOrigin.text).toContain("Content-Type must be application/json");
    }
    expect(rig.chats()).toHaveLength(0);
  });

  it("a foreign Origin with a JSON body is refused in the door's own error shape", async () => {
    const rig = await proxyRig([{ content: "hello" }]);
    const openai = await post(rig, "/v1/chat/completions", { "content-type": "application/json", origin: "http://evil.example" });
    expect(openai.status).toBe(403);
    expect(JSON.parse(openai.text)).toMatchObject({ error: { type: "permission_error" } });
    const anthropic = await post(rig, "/v1/messages", { "content-type": "application/json", origin: "null" });
    expect(JSON.parse(anthropic.text)).toMatchObject({ type: "error", error: { type: "permission_error" } });
    const ollama = await post(rig, "/api/chat", { "content-type": "application/json", origin: "http://evil.example" });
    expect(JSON.parse(ollama.text)).toEqual({ error: expect.stringContaining("refused") });
    expect(openai.headers["access-control-allow-origin"]).toBeUndefined();
    expect(rig.chats()).toHaveLength(0);
  });

  it("a DNS-rebinding page (Host: evil.example) can read neither a completion nor /forge/stats, /v1/models, /metrics", async () => {
    const rig = await proxyRig([{ content: "hello" }]);
    expect((await post(rig, "/v1/chat/completions", { "content-type": "application/json", host: "evil.example:8081" })).status).toBe(403);
    for (const path of ["/forge/stats", "/v1/models", "/metrics", "/api/tags", "/"]) {
      const res = await request(`${rig.url}${path}`, { headers: { host: "evil.example" } });
      expect([path, res.statusCode]).toEqual([path, 403]);
      await res.body.dump();
    }
    expect(rig.chats()).toHaveLength(0);
  });

  it("this machine's own clients pass: no Origin, or a loopback one, with a loopback Host", async () => {
    const rig = await proxyRig([{ content: "hello" }, { content: "again" }]);
    expect((await post(rig, "/v1/chat/completions", { "content-type": "application/json" })).status).toBe(200);
    expect((await post(rig, "/v1/chat/completions", { "content-type": "application/json; charset=utf-8", origin: "http://localhost:3000", host: "localhost:8081" })).status).toBe(200);
    expect(rig.chats()).toHaveLength(2);
  });
});

describe("--cors-origin: a browser app on a named origin", () => {
  const app = "https://app.example.com";

  it("gets its preflight answered and CORS headers on the answer; any other origin is refused", async () => {
    const rig = await proxyRig([{ content: "hello" }], { proxy: { corsOrigins: [app] } });
    const preflight = await request(`${rig.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: app, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({ "access-control-allow-origin": app, "access-control-allow-methods": expect.stringContaining("POST"), "access-control-allow-headers": "authorization, content-type" });
    await preflight.body.dump();
    const answer = await post(rig, "/v1/chat/completions", { "content-type": "application/json", origin: app });
    expect(answer.status).toBe(200);
    expect(answer.headers["access-control-allow-origin"]).toBe(app);
    expect(answer.headers["access-control-expose-headers"]).toContain("x-forge-request-id");
    const other = await request(`${rig.url}/v1/chat/completions`, { method: "OPTIONS", headers: { origin: "https://other.example.com", "access-control-request-method": "POST" } });
    expect(other.statusCode).toBe(403);
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    await other.body.dump();
    expect(rig.chats()).toHaveLength(1);
  });

  it("refuses what is not an origin, naming the option", async () => {
    await expect(proxyRig([], { proxy: { corsOrigins: ["https://app.example.com/path"] } })).rejects.toThrow(/corsOrigins\[0\].*not an origin/);
  });
});

describe("beyond loopback (0.0.0.0 with a key)", () => {
  it("takes any Host and its own origin with the key; refuses a foreign page even with the key", async () => {
    const rig = await proxyRig([{ content: "hello" }, { content: "again" }]);
    const key = "k".repeat(32);
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: rig.backend.url, think: false }), apiKey: key });
    const { port } = await proxy.listen({ port: 0, host: "0.0.0.0" });
    try {
      const url = `http://127.0.0.1:${port}/v1/chat/completions`;
      const send = async (headers: Record<string, string>) => {
        const res = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
        await res.body.dump();
        return res.statusCode;
      };
      expect(await send({ host: "192.168.1.5:8081" })).toBe(401);
      expect(await send({ host: "192.168.1.5:8081", authorization: `Bearer ${key}` })).toBe(200);
      expect(await send({ host: "192.168.1.5:8081", origin: "http://192.168.1.5:8081", authorization: `Bearer ${key}` })).toBe(200);
      expect(await send({ host: "192.168.1.5:8081", origin: "http://evil.example", authorization: `Bearer ${key}` })).toBe(403);
      expect(rig.chats()).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });

  it("docs/security.md's LAN setup: the allowed app with the key is served, from a browser too; nothing else is", async () => {
    const rig = await proxyRig([{ content: "hello" }]);
    const key = "k".repeat(32);
    const app = "https://app.example.com";
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: rig.backend.url, think: false }), apiKey: key, corsOrigins: [app] });
    const { port } = await proxy.listen({ port: 0, host: "0.0.0.0" });
    try {
      const url = `http://127.0.0.1:${port}/v1/chat/completions`;
      const lan = { host: `192.168.1.5:${port}` };
      const preflight = await request(url, { method: "OPTIONS", headers: { ...lan, origin: app, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
      await preflight.body.dump();
      expect([preflight.statusCode, preflight.headers["access-control-allow-origin"]]).toEqual([204, app]);
      const send = async (headers: Record<string, string>) => {
        const res = await request(url, { method: "POST", headers: { "content-type": "application/json", ...lan, ...headers }, body });
        await res.body.dump();
        return [res.statusCode, res.headers["access-control-allow-origin"]];
      };
      expect(await send({ origin: app, authorization: `Bearer ${key}` })).toEqual([200, app]);
      expect(await send({ origin: app })).toEqual([401, app]);
      expect(await send({ origin: "https://other.example.com", authorization: `Bearer ${key}` })).toEqual([403, undefined]);
      expect(rig.chats()).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });
});
