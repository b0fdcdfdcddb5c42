/**
 * A fleet config's per-backend `apiKey` (a literal or `$NAME`) reaches each backend on every
 * request the proxy makes of it: chats on each door, the health probe, the window it learns
 * (/props, /api/show, vLLM's /models), token counts (/apply-template, /tokenize) and the Ollama
 * door's pass-through. Each backend gets its own key, never another's. The backends are
 * loopback servers that answer 401 without their key.
 */
import { describe, expect, it } from "vitest";
import { LlamafileClient } from "../../../src/clients/llamafile.js";
import { OllamaClient } from "../../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../../src/clients/openai-compat.js";
import { createProxy } from "../../../src/proxy/create-proxy.js";
import { probeBackend } from "../../../src/proxy/fleet/backend-health.js";
import { parseProxyConfig } from "../../../src/proxy/fleet/proxy-config.js";
import { useKeyedServers, type KeyedServer } from "../../clients/support/keyed-server.js";

const serve = useKeyedServers();

const json = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const chat = (model: string, extra: Record<string, unknown> = {}) => json("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }], ...extra });

function onlyKey(server: KeyedServer, key: string): void {
  expect(server.refused()).toEqual([]);
  expect(new Set(server.auths())).toEqual(new Set([`Bearer ${key}`]));
}

describe("a fleet config's per-backend apiKey", () => {
  it("reaches llama-server, Ollama and vLLM backends on chats, health probes, windows, token counts and pass-through", async () => {
    const [llama, ollama, vllm] = [await serve("llamaserver", ["k-llama"]), await serve("ollama", ["k-ollama"]), await serve("vllm", ["k-vllm"])];
    const text = JSON.stringify({
      backends: {
        llama: { backend: "llamaserver", baseUrl: llama.baseUrl, model: "test-model", apiKey: "k-llama" },
        ollama: { backend: "ollama", baseUrl: ollama.baseUrl, model: "test-model", apiKey: "$OLLAMA_PROXY_KEY" },
        vllm: { backend: "openai", baseUrl: vllm.baseUrl, model: "test-model", apiKey: "k-vllm" },
      },
      models: { "on-llama": { backends: ["llama"] }, "on-ollama": { backends: ["ollama"] }, "on-vllm": { backends: ["vllm"] } },
    });
    const proxy = createProxy({ config: parseProxyConfig(text, "proxy.json", { OLLAMA_PROXY_KEY: "k-ollama" }) });
    try {
      const health = await proxy.fetch(new Request("http://127.0.0.1/health"));
      expect(health.status).toBe(200);
      for (const model of ["on-llama", "on-ollama", "on-vllm"]) {
        expect((await proxy.fetch(chat(model))).status, model).toBe(200);
        expect((await proxy.fetch(chat(model, { stream: true }))).status, model).toBe(200);
        expect((await proxy.fetch(json("/api/chat", { model, stream: false, messages: [{ role: "user", content: "hi" }] }))).status, model).toBe(200);
      }
      expect((await proxy.fetch(json("/v1/messages/count_tokens", { model: "on-llama", messages: [{ role: "user", content: "hi" }] }))).status).toBe(200);
      expect((await proxy.fetch(json("/api/show", { model: "on-ollama" }))).status).toBe(200);
      expect((await proxy.fetch(json("/api/generate", { model: "on-ollama", prompt: "hi", stream: false }))).status).toBe(200);
    } finally {
      await proxy.close();
    }
    // The probe (model list), the window, the chats; the count and the pass-through where the backend has them.
    expect(new Set(llama.requests.map((r) => r.path))).toEqual(new Set(["/v1/models", "/props", "/v1/chat/completions", "/apply-template", "/tokenize"]));
    expect(new Set(ollama.requests.map((r) => r.path))).toEqual(new Set(["/api/tags", "/api/show", "/api/chat", "/api/generate"]));
    expect(new Set(vllm.requests.map((r) => r.path))).toEqual(new Set(["/v1/models", "/v1/chat/completions"]));
    onlyKey(llama, "k-llama");
    onlyKey(ollama, "k-ollama");
    onlyKey(vllm, "k-vllm");
  });

  it("with forwardAuth a caller's key replaces the backend's own for its chat; the backend's key still goes with the rest", async () => {
    const llama = await serve("llamaserver", ["k-llama", "caller"]);
    const text = JSON.stringify({ backends: { llama: { backend: "llamaserver", baseUrl: llama.baseUrl, model: "test-model", apiKey: "k-llama" } }, models: { m: { backends: ["llama"] } } });
    const proxy = createProxy({ config: parseProxyConfig(text, "proxy.json", {}), forwardAuth: true });
    try {
      expect((await proxy.fetch(json("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] }, { authorization: "Bearer caller" }))).status).toBe(200);
      expect((await proxy.fetch(chat("m"))).status).toBe(200);
    } finally {
      await proxy.close();
    }
    expect(llama.to("/v1/chat/completions").map((r) => r.headers.authorization)).toEqual(["Bearer caller", "Bearer k-llama"]);
    expect(llama.to("/props").map((r) => r.headers.authorization)).toEqual(["Bearer k-llama"]);
    expect(llama.refused()).toEqual([]);
  });
});

describe("a fleet key that cannot go in a header", () => {
  it("is refused at start, named by its place in the config (a CRLF .env leaves a \\r on the value)", () => {
    const text = JSON.stringify({ backends: { gpu0: { backend: "ollama", model: "m", apiKey: "$GPU0_KEY" } }, models: { m: { backends: ["gpu0"] } } });
    const config = parseProxyConfig(text, "proxy.json", { GPU0_KEY: "k\r" });
    expect(() => createProxy({ config })).toThrow("Invalid backends.gpu0.apiKey: contains a line break or other control character");
  });
});

describe("the health probe", () => {
  it("carries each client's key (a 401 would still count as up, so the header is what says it)", async () => {
    const [llama, ollama, vllm] = [await serve("llamaserver", ["k"]), await serve("ollama", ["k"]), await serve("vllm", ["k"])];
    const clients = [
      new LlamafileClient({ model: "m", baseUrl: llama.baseUrl, apiKey: "k" }),
      new OllamaClient({ model: "m", baseUrl: ollama.baseUrl, apiKey: "k" }),
      new OpenAICompatClient({ model: "m", baseUrl: vllm.baseUrl, apiKey: "k" }),
    ];
    for (const client of clients) expect(await probeBackend(client, 2_000)).toBeUndefined();
    for (const server of [llama, ollama, vllm]) {
      expect(server.requests).toHaveLength(1);
      onlyKey(server, "k");
    }
  });
});
