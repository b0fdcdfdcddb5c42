/**
 * POST /api/chat and the Ollama endpoints around it, over real sockets: the proxy in front of a
 * loopback Ollama and in front of a loopback OpenAI-style server (llama-server's wire format).
 * What an Ollama client reads is checked as Ollama's API defines it (api/types.go).
 */
import { describe, expect, it } from "vitest";
import { readLines } from "../../src/clients/ndjson.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { useFakeServers } from "../clients/support/fake-server.js";
import { fakeBackend, fleetConfig, fleetProxy } from "./fleet/support/fleet-rig.js";
import { hermes, proxyRig, WEATHER_SCHEMA, type Rig } from "./support/harness.js";

const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];
const ask = [{ role: "user", content: "Weather in Oslo?" }];

async function chat(rig: Rig, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${rig.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", ...body }) });
}

async function lines(res: Response): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const line of readLines(res.body as unknown as AsyncIterable<Uint8Array>)) if (line.trim() !== "") out.push(JSON.parse(line) as Record<string, unknown>);
  return out;
}

const message = (line: Record<string, unknown>) => line.message as { role: string; content: string; thinking?: string; tool_calls?: { id?: string; function: { name: string; arguments: unknown } }[] };

describe.each(["ollama", "openai"] as const)("POST /api/chat in front of the %s wire", (wire) => {
  it("streams by default: NDJSON lines of prose, then a done line with the counters", async () => {
    const rig = await proxyRig([{ content: "Hello there, friend." }], { wire });
    const res = await chat(rig, { messages: ask });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const all = await lines(res);
    const last = all.at(-1)!;
    expect(all.slice(0, -1).every((l) => l.done === false && l.model === "qwen3:8b" && typeof l.created_at === "string")).toBe(true);
    expect(all.map((l) => message(l).content).join("")).toBe("Hello there, friend.");
    expect(last).toMatchObject({ done: true, done_reason: "stop", prompt_eval_count: 11, eval_count: 7, load_duration: 0, prompt_eval_duration: 0 });
    expect(last.total_duration).toBeGreaterThan(0);
    expect(Number.isInteger(last.eval_duration)).toBe(true);
  });

  it("stream: false answers one object", async () => {
    const rig = await proxyRig([{ content: "Hi." }], { wire });
    const res = await chat(rig, { messages: ask, stream: false });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ model: "qwen3:8b", message: { role: "assistant", content: "Hi." }, done: true, done_reason: "stop" });
  });

  it.each([false, true])("a Hermes text call comes back as message.tool_calls with object arguments (stream %s)", async (stream) => {
    const rig = await proxyRig([{ content: hermes("get_weather", { city: "Oslo" }) }], { wire });
    const res = await chat(rig, { messages: ask, tools, stream });
    const all = stream ? await lines(res) : [(await res.json()) as Record<string, unknown>];
    const calls = all.flatMap((l) => message(l).tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.function).toEqual({ index: 0, name: "get_weather", arguments: { city: "Oslo" } });
    expect(all.at(-1)).toMatchObject({ done: true, forge: { rescued: true, attempts: 1 } });
    // Nothing of the call's text reached the caller as prose.
    expect(all.map((l) => message(l).content).join("")).not.toContain("tool_call");
  });

  it("a misspelled tool is nudged and retried before the caller sees an answer", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }, { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }], { wire });
    const body = (await (await chat(rig, { messages: ask, tools, stream: false })).json()) as Record<string, unknown>;
    expect(message(body).tool_calls![0]!.function.name).toBe("get_weather");
    expect(body.forge).toMatchObject({ attempts: 2 });
    expect(rig.chats()).toHaveLength(2);
  });

  it("reads Ollama's history: object arguments, tool_name results, images as a placeholder line", async () => {
    const rig = await proxyRig([{ content: "It is 12C in Oslo." }], { wire });
    const history = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Oslo?", images: ["iVBORw0KGgo="] },
      // ollama-ai-provider-v2 sends an image-only turn with a list for content.
      { role: "user", content: [], images: ["iVBORw0KGgo="] },
      { role: "assistant", content: "", thinking: "I should call the tool.", tool_calls: [{ function: { name: "get_weather", arguments: { city: "Oslo" } } }] },
      { role: "tool", tool_name: "get_weather", content: "12C" },
    ];
    const res = await chat(rig, { messages: history, tools, stream: false });
    expect(res.status).toBe(200);
    const sent = rig.chats()[0]!.body as { messages: Record<string, unknown>[] };
    expect(sent.messages[1]!.content).toBe("Weather in Oslo?\n[image omitted: the forge-ts proxy sends the model text only]");
    expect(sent.messages[2]!.content).toBe("[image omitted: the forge-ts proxy sends the model text only]");
    sent.messages.splice(2, 1);
    const call = (sent.messages[2]!.tool_calls as { function: { name: string; arguments: unknown } }[])[0]!;
    expect(call.function.name).toBe("get_weather");
    expect(wire === "ollama" ? call.function.arguments : JSON.parse(call.function.arguments as string)).toEqual({ city: "Oslo" });
    // The result is paired with its call: the OpenAI wire gets the call's id on the result, and no stand-in.
    if (wire === "openai") {
      expect(sent.messages).toHaveLength(4);
      expect(sent.messages[3]).toMatchObject({ role: "tool", content: "12C", tool_call_id: (sent.messages[2]!.tool_calls as { id: string }[])[0]!.id });
    } else {
      expect(sent.messages[3]).toMatchObject({ role: "tool", content: "12C", tool_name: "get_weather" });
    }
  });

  it("options with an OpenAI name reach every backend; Ollama's own options, keep_alive and think only an Ollama", async () => {
    const rig = await proxyRig([{ content: "ok" }], { wire });
    await chat(rig, { messages: ask, stream: false, options: { temperature: 0.2, num_predict: 64, stop: ["\n\n"], num_ctx: 8192, mirostat: 2 }, keep_alive: "10m", think: false });
    const sent = rig.chats()[0]!.body as Record<string, unknown>;
    if (wire === "ollama") {
      expect(sent.options).toEqual({ temperature: 0.2, num_predict: 64, stop: ["\n\n"], num_ctx: 8192, mirostat: 2 });
      expect(sent).toMatchObject({ keep_alive: "10m", think: false });
    } else {
      expect(sent).toMatchObject({ temperature: 0.2, max_tokens: 64, stop: ["\n\n"] });
      expect(sent).not.toHaveProperty("options");
      expect(sent).not.toHaveProperty("keep_alive");
      expect(sent).not.toHaveProperty("think");
    }
  });

  it("format: a JSON Schema answer is checked and retried like response_format", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const rig = await proxyRig([{ content: "Sure! Oslo." }, { content: '{"city": "Oslo"}' }], { wire });
    const body = (await (await chat(rig, { messages: ask, format: schema, stream: false })).json()) as Record<string, unknown>;
    expect(JSON.parse(message(body).content)).toEqual({ city: "Oslo" });
    expect(rig.chats()).toHaveLength(2);
    const sent = rig.chats()[0]!.body as Record<string, unknown>;
    if (wire === "ollama") expect(sent.format).toEqual(schema);
    else expect(sent.response_format).toMatchObject({ type: "json_schema", json_schema: { schema } });
  });

  it("errors are Ollama's shape: 400 for a bad body, 404 for an unknown route", async () => {
    const rig = await proxyRig([], { wire });
    const bad = await chat(rig, { messages: [{ role: "wizard", content: "hi" }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringContaining("messages[0].role") });
    const missing = await fetch(`${rig.url}/api/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "No route for GET /api/nothing" });
  });

  it("a backend that fails mid-way: a streamed request gets Ollama's error status before any line", async () => {
    const rig = await proxyRig(() => ({}) as never, { wire, proxy: { maxRetries: 0 } });
    await rig.backend.close();
    const res = await chat(rig, { messages: ask });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: expect.stringContaining("Backend unreachable") });
  });
});

const serve = useFakeServers();

describe("a stream that breaks after its first line", () => {
  it("ends with an {error} line, after the prose that went out", async () => {
    const backend = await serve((req, res) => {
      if (req.path === "/api/show") return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify({ model: "m", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: "Partial answer" }, done: false })}\n`);
      // Then the stream ends without Ollama's done line: a broken stream, after text went out.
      res.end();
    });
    const proxy = createProxy({ client: new OllamaClient({ model: "m", baseUrl: backend.url, think: false }) });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    try {
      const res = await fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: ask }) });
      expect(res.status).toBe(200);
      const all = await lines(res);
      expect(message(all[0]!).content).toBe("Partial answer");
      expect(all.at(-1)).toEqual({ error: expect.stringContaining("Backend") });
      expect(all.some((l) => l.done === true)).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});

describe("the endpoints Ollama clients read before they chat", () => {
  it("/ and HEAD / say Ollama is running", async () => {
    const rig = await proxyRig([]);
    expect(await (await fetch(rig.url)).text()).toBe("Ollama is running");
    expect((await fetch(rig.url, { method: "HEAD" })).status).toBe(200);
  });

  it("in front of Ollama: /api/tags and /api/version are Ollama's; /api/show reports the enforced window and keeps the rest", async () => {
    const rig = await proxyRig([], { proxy: { contextLength: 16_384 } });
    const tags = (await (await fetch(`${rig.url}/api/tags`)).json()) as { models: { name: string }[] };
    expect(tags.models.map((m) => m.name)).toEqual(["qwen3:8b"]);
    const show = (await (await fetch(`${rig.url}/api/show`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b" }) })).json()) as Record<string, unknown>;
    expect(show.model_info).toEqual({ "general.architecture": "qwen3", "qwen3.context_length": 16_384 });
    expect(show.details).toEqual({ family: "qwen3" });
  });

  it("in front of an OpenAI-style backend: built from the model list and the window, with the tools capability", async () => {
    const rig = await proxyRig([], { wire: "openai", contextLength: 20_000 });
    const tags = (await (await fetch(`${rig.url}/api/tags`)).json()) as { models: { name: string; model: string; details: unknown }[] };
    expect(tags.models).toEqual([expect.objectContaining({ name: "qwen3:8b", model: "qwen3:8b", size: 0 })]);
    const show = (await (await fetch(`${rig.url}/api/show`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b" }) })).json()) as Record<string, unknown>;
    expect(show.capabilities).toEqual(["completion", "tools"]);
    expect(show.model_info).toEqual({ "general.architecture": "forge", "forge.context_length": 20_000 });
    const ps = (await (await fetch(`${rig.url}/api/ps`)).json()) as { models: Record<string, unknown>[] };
    expect(ps.models).toEqual([expect.objectContaining({ name: "qwen3:8b", context_length: 20_000 })]);
    expect(await (await fetch(`${rig.url}/api/version`)).json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
  });

  it("/api/generate and /api/embed pass through to Ollama, and get a clear error from any other backend", async () => {
    const ollama = await proxyRig([]);
    const generated = await fetch(`${ollama.url}/api/generate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", prompt: "hi", stream: false }) });
    // The fake answers every unscripted request with Ollama's error shape: what matters is that it got it.
    expect(ollama.backend.requests.some((r) => r.path === "/api/generate" && (r.body as { prompt?: string }).prompt === "hi")).toBe(true);
    expect(await generated.json()).toEqual({ error: expect.any(String) });
    const other = await proxyRig([], { wire: "openai" });
    const refused = await fetch(`${other.url}/api/embed`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", input: "hi" }) });
    expect(refused.status).toBe(501);
    expect(((await refused.json()) as { error: string }).error).toContain("passed through to an Ollama backend only");
  });

  it("a chat with no messages loads the model: passed through to Ollama, answered done_reason load by others", async () => {
    const ollama = await proxyRig([]);
    await fetch(`${ollama.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", messages: [], keep_alive: "1h" }) });
    expect(ollama.chats().map((r) => r.body)).toEqual([{ model: "qwen3:8b", messages: [], keep_alive: "1h" }]);
    const other = await proxyRig([], { wire: "openai" });
    const res = await fetch(`${other.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", messages: [] }) });
    expect(await res.json()).toMatchObject({ model: "qwen3:8b", message: { role: "assistant", content: "" }, done_reason: "load", done: true });
    expect(other.chats()).toEqual([]);
  });

  it.each(["/api/pull", "/api/create", "/api/delete", "/api/blobs/sha256:abc"])("%s is never proxied (403, naming where to manage models)", async (path) => {
    const rig = await proxyRig([]);
    const res = await fetch(`${rig.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b" }) });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain(`ollama pull`);
    expect(rig.backend.requests.some((r) => r.path === path)).toBe(false);
  });
});

describe("the Ollama door in front of a fleet", () => {
  it("/api/tags lists the fleet's names and aliases with the Ollama model's own entry; an unknown model is a 404 with a string error", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const { url } = await fleetProxy(fleetConfig([a, b]));
    const tags = (await (await fetch(`${url}/api/tags`)).json()) as { models: { name: string; model: string; modified_at: string }[] };
    expect(tags.models.map((m) => m.name)).toEqual(["m", "alias-m"]);
    // The Ollama backend's own entry (its modified_at), under the fleet's name.
    expect(tags.models[0]).toEqual({ name: "m", model: "m", modified_at: "2026-01-01T00:00:00Z" });
    const show = await fetch(`${url}/api/show`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "alias-m" }) });
    expect(((await show.json()) as { model_info: Record<string, unknown> }).model_info).toEqual({ "general.architecture": "qwen3", "qwen3.context_length": 32_768 });
    const unknown = await fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "llama9", messages: ask }) });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'model "llama9" not found: this forge-ts proxy does not serve it (GET /api/tags lists the names it serves)' });
    const unknownShow = await fetch(`${url}/api/show`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "llama9" }) });
    expect(unknownShow.status).toBe(404);
  });
});
