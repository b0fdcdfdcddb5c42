/**
 * Absurd nesting, wherever the proxy meets it. From the caller: a history call whose arguments
 * hold JSON 20,000 or 100,000 levels deep — as a string field (OpenAI and Responses
 * `arguments`, Anthropic `input` as a string, Ollama `arguments` as a string) or as a value in
 * the body — is the caller's 400 naming the field, on every door, the backend never asked; it
 * was a 502 "Maximum call stack size exceeded" from the context-window check before. From the
 * model: such arguments are a nudge (or, where only a typed error is possible, that error),
 * never a RangeError. /health answers afterwards every time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import type { LLMClient } from "../../src/core/llm.js";
import { createProxy, type ProxyServer } from "../../src/proxy/create-proxy.js";
import { sendJson, useFakeServers, type RecordedRequest } from "../clients/support/fake-server.js";
import { DOORS, postDoor } from "./support/doors.js";
import { proxyRig, WINDOW_PATHS, windowAnswer, type Rig } from "./support/harness.js";

const arrays = (n: number) => "[".repeat(n) + "]".repeat(n);
const objects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
const DEPTHS = [20_000, 100_000];

async function expectHealthy(url: string): Promise<void> {
  const res = await fetch(`${url}/health`);
  expect(res.status).toBe(200);
}

describe.each(DOORS)("a caller's deeply nested history on the $name door ($path)", (door) => {
  it.each(DEPTHS)("arguments as a JSON string %d levels deep → 400 naming the field", async (depth) => {
    const rig = await proxyRig([]);
    const res = await postDoor(rig.url, door, door.body({ call: { args: arrays(depth) } }));
    expect(res.status).toBe(400);
    expect(door.errorMessage((await res.json()) as Record<string, unknown>)).toBe(`${door.argsField}: nested deeper than 64 levels`);
    expect(rig.chats()).toHaveLength(0);
    await expectHealthy(rig.url);
  });

  it.each(DEPTHS)("arguments as a value %d levels deep in the body → 400 naming the field", async (depth) => {
    const rig = await proxyRig([]);
    // Spliced in as text: JSON.stringify of such a value would overflow the test's own stack.
    const body = JSON.stringify(door.body({ call: { args: "DEEP" } })).replace('"DEEP"', objects(depth));
    const res = await postDoor(rig.url, door, body);
    expect(res.status).toBe(400);
    const message = door.errorMessage((await res.json()) as Record<string, unknown>);
    expect(message).toMatch(/: nested deeper than 64 levels$/);
    // A string field holds one decoded value; in the body, the path runs on into the value.
    expect(message.startsWith(door.argsField)).toBe(true);
    expect(rig.chats()).toHaveLength(0);
    await expectHealthy(rig.url);
  });

  it("arguments 64 levels deep are still taken", async () => {
    const rig = await proxyRig([{ content: "Sunny." }]);
    const res = await postDoor(rig.url, door, door.body({ call: { args: `{"city": ${arrays(63)}}` } }));
    expect(res.status).toBe(200);
    expect(rig.chats()).toHaveLength(1);
  });
});

describe("a caller's deeply nested history elsewhere", () => {
  it("/v1/messages/count_tokens → 400 naming the field", async () => {
    const rig = await proxyRig([]);
    const { max_tokens: _unused, ...body } = DOORS.find((d) => d.name === "anthropic")!.body({ call: { args: arrays(100_000) } });
    const res = await fetch(`${rig.url}/v1/messages/count_tokens`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("messages[1].content[0].input: nested deeper than 64 levels");
    await expectHealthy(rig.url);
  });

  it("a streamed request is refused the same way, before any stream starts", async () => {
    const rig = await proxyRig([]);
    const door = DOORS.find((d) => d.name === "ollama")!;
    const res = await postDoor(rig.url, door, { ...door.body({ call: { args: arrays(100_000) } }), stream: true });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe(`${door.argsField}: nested deeper than 64 levels`);
  });
});

// ── The model's side ────────────────────────────────────────────────────────────────────

const serve = useFakeServers();
const proxies: ProxyServer[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/** A proxy in front of a backend whose first chat answer is `first` verbatim and whose later ones say "Sunny.". */
async function rawRig(wire: "ollama" | "openai", first: (req: RecordedRequest) => { type: string; body: string }): Promise<Pick<Rig, "url"> & { chats: () => RecordedRequest[] }> {
  let n = 0;
  const backend = await serve((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [] });
    if (WINDOW_PATHS.has(req.path)) return sendJson(res, 200, windowAnswer(req.path, 10_000_000));
    const answer = n++ === 0 ? first(req) : later(wire, req.body.stream === true);
    res.writeHead(200, { "content-type": answer.type });
    res.end(answer.body);
  });
  const client: LLMClient = wire === "ollama" ? new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url }) : new OpenAICompatClient({ model: "qwen3:8b", baseUrl: `${backend.url}/v1` });
  const proxy = createProxy({ client });
  proxies.push(proxy);
  const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
  return { url, chats: () => backend.requests.filter((r) => r.method === "POST" && !WINDOW_PATHS.has(r.path)) };
}

function later(wire: "ollama" | "openai", stream: boolean): { type: string; body: string } {
  if (wire === "ollama") {
    const line = JSON.stringify({ model: "qwen3:8b", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: "Sunny." }, done: true, done_reason: "stop", prompt_eval_count: 1, eval_count: 1 });
    return { type: stream ? "application/x-ndjson" : "application/json", body: stream ? `${line}\n` : line };
  }
  if (stream) {
    const chunk = { id: "x", object: "chat.completion.chunk", created: 1, model: "qwen3:8b", choices: [{ index: 0, delta: { role: "assistant", content: "Sunny." }, finish_reason: "stop" }] };
    return { type: "text/event-stream", body: `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n` };
  }
  return { type: "application/json", body: JSON.stringify(openaiMessage({ role: "assistant", content: "Sunny." })) };
}

function openaiMessage(message: Record<string, unknown>): Record<string, unknown> {
  return { id: "x", object: "chat.completion", created: 1, model: "qwen3:8b", choices: [{ index: 0, message, finish_reason: "stop" }] };
}

/** An Ollama /api/chat answer (one JSON document or one NDJSON line) with `messageJson` spliced in as text. */
const ollamaAnswer = (messageJson: string) => `{"model":"qwen3:8b","created_at":"2026-01-01T00:00:00Z","message":${messageJson},"done":true,"done_reason":"stop","prompt_eval_count":1,"eval_count":1}`;

const openai = DOORS.find((d) => d.name === "openai")!;
const toolMessages = (req: RecordedRequest) => (req.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool" || m.role === "user").map((m) => m.content).join("\n");

describe.each(DEPTHS)("a model's arguments %d levels deep", (depth) => {
  it("an OpenAI-style arguments string → a nudge, then the model's answer", async () => {
    const call = { id: "c1", type: "function", function: { name: "get_weather", arguments: arrays(depth) } };
    const rig = await rawRig("openai", () => ({ type: "application/json", body: JSON.stringify(openaiMessage({ role: "assistant", content: null, tool_calls: [call] })) }));
    const res = await postDoor(rig.url, openai, openai.body());
    expect(res.status).toBe(200);
    expect(rig.chats()).toHaveLength(2);
    expect(toolMessages(rig.chats()[1]!)).toMatch(/\[InvalidArguments\][\s\S]*must be a JSON object/);
    await expectHealthy(rig.url);
  });

  it("a call written in the text (Hermes) → a nudge, then the model's answer", async () => {
    const content = `<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "z": ${objects(depth)}}}</tool_call>`;
    const rig = await rawRig("ollama", () => ({ type: "application/json", body: ollamaAnswer(JSON.stringify({ role: "assistant", content })) }));
    const res = await postDoor(rig.url, openai, openai.body({ schema: { type: "object", properties: { city: { type: "string" } } } }));
    expect(res.status).toBe(200);
    expect(rig.chats()).toHaveLength(2);
    expect(toolMessages(rig.chats()[1]!)).toMatch(/nested more than 256 levels/);
    await expectHealthy(rig.url);
  });

  it("an Ollama stream line with an arguments object that deep → a malformed stream, asked again, then the answer", async () => {
    const line = ollamaAnswer(`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo","z":${objects(depth)}}}}]}`);
    const rig = await rawRig("ollama", () => ({ type: "application/x-ndjson", body: `${line}\n` }));
    const res = await postDoor(rig.url, openai, { ...openai.body(), stream: true });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Sunny.");
    expect(rig.chats()).toHaveLength(2);
    await expectHealthy(rig.url);
  });

  it("an unstreamed Ollama arguments object that deep → a nudge, then the model's answer", async () => {
    const message = `{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo","z":${objects(depth)}}}}]}`;
    const rig = await rawRig("ollama", () => ({ type: "application/json", body: ollamaAnswer(message) }));
    const res = await postDoor(rig.url, openai, openai.body());
    expect(res.status).toBe(200);
    expect(rig.chats()).toHaveLength(2);
    expect(toolMessages(rig.chats()[1]!)).toMatch(/\[InvalidArguments\][\s\S]*must be a JSON object/);
    await expectHealthy(rig.url);
  });
});
