/**
 * POST /v1/responses through the official `openai` SDK (`client.responses.create`, unstreamed
 * and `stream().finalResponse()`), in front of a loopback Ollama: text calls rescued into
 * function_call items, a misspelled tool nudged and corrected, prose, json_schema `text.format`,
 * multi-turn input with function_call + function_call_output, namespace tools restored,
 * built-in tools dropped and named, the stateless 400, and a failure inside an open stream.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { readFileSync } from "node:fs";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { scrape } from "../support/prometheus.js";
import { hermes, proxyRig, WEATHER_SCHEMA, type Rig } from "./support/harness.js";

const weather: OpenAI.Responses.FunctionTool = { type: "function", name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA, strict: false };
const serve = useFakeServers();
const openai = (rig: Rig) => new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });

/** One answer through the SDK's own parsing: `create` unstreamed, the stream's `finalResponse()` streamed. */
async function respond(rig: Rig, stream: boolean, extra: Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming> = {}) {
  const params = { model: "qwen3:8b", input: "Weather in Oslo?", tools: [weather], ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  const client = openai(rig);
  if (!stream) return { response: await client.responses.create(params), events: [] as string[] };
  const events: string[] = [];
  const run = client.responses.stream({ ...params, stream: true });
  run.on("event", (e) => events.push(e.type));
  return { response: await run.finalResponse(), events };
}

const calls = (response: OpenAI.Responses.Response) => response.output.filter((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === "function_call");

describe.each([false, true])("openai SDK responses, stream %s", (stream) => {
  it("rescues a Hermes text call into a function_call item", async () => {
    const rig = await proxyRig([{ content: hermes("get_weather", { city: "Oslo" }) }]);
    const { response, events } = await respond(rig, stream);
    expect(response).toMatchObject({ object: "response", status: "completed", model: "qwen3:8b", store: false });
    expect(response.id).toMatch(/^resp_/);
    const [call] = calls(response);
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(call!.id).toMatch(/^fc_/);
    expect(call!.call_id).toMatch(/\S/);
    expect(JSON.parse(call!.arguments)).toEqual({ city: "Oslo" });
    expect(response.output.some((i) => i.type === "message"), "no text beside the rescued call").toBe(false);
    expect(response.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(rig.chats()[0]!.body.tools[0].function.name).toBe("get_weather");
    if (stream) {
      expect(events.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
      expect(events).toContain("response.function_call_arguments.delta");
      expect(events.slice(-3)).toEqual(["response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
    }
  });

  it("nudges a misspelled tool name and answers with the corrected call", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }, { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }]);
    const { response } = await respond(rig, stream);
    expect(calls(response).map((c) => c.name)).toEqual(["get_weather"]);
    expect(JSON.stringify(response)).not.toContain("get_wether");
    expect(rig.chats()).toHaveLength(2);
    expect(JSON.stringify(rig.chats()[1]!.body.messages)).toMatch(/get_wether[\s\S]*get_weather/);
    expect(response).toMatchObject({ forge: { attempts: 2 } });
  });

  it("answers prose as a message item, with reasoning as a summary", async () => {
    const rig = await proxyRig([{ content: "It is sunny in Oslo.", reasoning: "The user wants weather." }]);
    const { response, events } = await respond(rig, stream, { tools: [] });
    expect(response.output_text).toBe("It is sunny in Oslo.");
    expect(response.output.map((i) => i.type)).toEqual(["reasoning", "message"]);
    expect(response.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "The user wants weather." }] });
    if (stream) expect(events).toEqual(expect.arrayContaining(["response.reasoning_summary_text.delta", "response.output_text.delta", "response.output_text.done"]));
  });

  it("checks a json_schema text.format and retries an answer that does not match", async () => {
    const format = { type: "json_schema" as const, name: "city", schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, strict: true };
    const rig = await proxyRig([{ content: "Oslo, of course." }, { content: '{"city": "Oslo"}' }]);
    const { response } = await respond(rig, stream, { tools: [], text: { format } });
    expect(JSON.parse(response.output_text)).toEqual({ city: "Oslo" });
    expect(rig.chats()).toHaveLength(2);
    expect(rig.chats()[0]!.body.format).toMatchObject({ required: ["city"] });
  });

  it("takes multi-turn input with function_call and function_call_output items", async () => {
    const rig = await proxyRig([{ content: "It is 21 °C in Oslo." }]);
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: "user", content: "Weather in Oslo?" },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Call the tool." }] },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call_output", call_id: "call_1", output: "21 °C" },
    ];
    const { response } = await respond(rig, stream, { input, instructions: "Be brief." });
    expect(response.output_text).toBe("It is 21 °C in Oslo.");
    const messages = rig.chats()[0]!.body.messages;
    expect(messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(messages[0].content).toBe("Be brief.");
    expect(messages[2].tool_calls[0].function).toMatchObject({ name: "get_weather", arguments: { city: "Oslo" } });
    expect(messages[3]).toMatchObject({ content: "21 °C" });
    expect(JSON.stringify(messages)).not.toContain("Call the tool.");
  });

  it("offers namespace tools under a flat name, restores it in the answer, and names the built-in tools it left out", async () => {
    const rig = await proxyRig([{ content: hermes("crm__lookup", { id: "42" }) }]);
    const crm = { type: "namespace", name: "crm", description: "Customer records", tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }] };
    const tools = [weather, crm, { type: "web_search" }] as unknown as OpenAI.Responses.Tool[];
    const client = openai(rig);
    const params = { model: "qwen3:8b", input: "Find customer 42", tools };
    const { data, response: raw } = stream ? await client.responses.stream(params).finalResponse().then((r) => ({ data: r, response: undefined })) : await client.responses.create(params).withResponse();
    expect(calls(data)).toMatchObject([{ name: "lookup", namespace: "crm", arguments: '{"id":"42"}' }]);
    expect(rig.chats()[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["get_weather", "crm__lookup"]);
    if (raw) expect(raw.headers.get("x-forge-dropped-tools")).toBe("web_search");
  });

  it("refuses previous_response_id with a 400 that says the proxy is stateless", async () => {
    const rig = await proxyRig([]);
    const error = await respond(rig, stream, { previous_response_id: "resp_123" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toMatch(/previous_response_id: the forge-ts proxy is stateless.*send the whole conversation/);
    expect(rig.chats()).toHaveLength(0);
  });
});

/** SSE text → the events' JSON payloads. */
const eventsOf = (text: string) =>
  text
    .split("\n\n")
    .filter((f) => f.startsWith("event:"))
    .map((f) => JSON.parse(f.split("\ndata: ")[1]!) as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any

const post = (url: string, body: unknown) => fetch(`${url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("POST /v1/responses on the wire", () => {
  it("serves Codex's real first request: web_search named as dropped, a namespaced text call rescued and its name restored", async () => {
    const codex = JSON.parse(readFileSync(new URL("../fixtures/agents/codex.json", import.meta.url), "utf8")) as { body: Record<string, unknown> };
    const rig = await proxyRig([{ content: hermes("multi_agent_v1__spawn_agent", { message: "write hello.txt" }) }]);
    const res = await post(rig.url, codex.body);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("x-forge-dropped-tools")).toBe("web_search");
    const events = eventsOf(await res.text());
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
    expect(done).toMatchObject([{ type: "function_call", name: "spawn_agent", namespace: "multi_agent_v1", arguments: '{"message":"write hello.txt"}' }]);
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed", output: done, store: false } });
    const sent = rig.chats()[0]!.body;
    expect(sent.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("multi_agent_v1__spawn_agent");
    expect(JSON.stringify(sent)).not.toMatch(/web_search|encrypted_content|prompt_cache_key|client_metadata/);
  });

  it("counts its requests under api=\"responses\", refused ones too", async () => {
    const rig = await proxyRig([{ content: hermes("get_weather", { city: "Oslo" }) }]);
    expect((await post(rig.url, { model: "qwen3:8b", input: "Weather?", tools: [weather] })).status).toBe(200);
    const refused = await post(rig.url, { model: "qwen3:8b", input: "Weather?", previous_response_id: "resp_1" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringContaining("stateless"), param: null, code: null } });
    const s = await scrape(`${rig.url}/metrics`);
    expect(s.value("forge_proxy_requests_total", { api: "responses", outcome: "ok", backend: "backend", model: "qwen3:8b" })).toBe(1);
    expect(s.value("forge_proxy_requests_total", { api: "responses", outcome: "rejected", backend: "none", model: "unknown" })).toBe(1);
  });

  it("answers the stored-response routes with a 404 that says the proxy is stateless", async () => {
    const rig = await proxyRig([]);
    const res = await fetch(`${rig.url}/v1/responses/resp_1`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { type: "not_found_error", message: expect.stringMatching(/GET \/v1\/responses\/resp_1: the forge-ts proxy is stateless/) } });
  });

  it("names dropped tools in a header on a streamed answer too, and numbers every event", async () => {
    const rig = await proxyRig([{ content: "Hi." }]);
    const res = await post(rig.url, { model: "qwen3:8b", input: "hi", stream: true, tools: [weather, { type: "file_search", vector_store_ids: ["vs_1"] }, { type: "custom", name: "apply_patch" }] });
    expect(res.headers.get("x-forge-dropped-tools")).toBe("file_search, custom:apply_patch");
    const numbers = eventsOf(await res.text()).map((e) => e.sequence_number as number);
    expect(numbers).toEqual(numbers.map((_, i) => i));
  });

  it("reports a backend failure inside an open stream as an error event, then response.failed", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The backend refuses only once the caller's stream is open (its headers went out with the first keep-alive).
    const backend = await serve(async (_req, res) => {
      await released;
      sendJson(res, 400, { error: "prompt is too long" });
    });
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url }), keepAliveMs: 1 });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    try {
      const res = await post(url, { model: "qwen3:8b", input: "hi", stream: true, tools: [weather] });
      expect(res.status).toBe(200);
      release();
      const events = eventsOf(await res.text());
      expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "error", "response.failed"]);
      expect(events[2]).toMatchObject({ code: "invalid_request_error", message: expect.stringContaining("prompt is too long"), error: { type: "invalid_request_error" } });
      expect(events[3]!.response).toMatchObject({ status: "failed", error: { code: "invalid_request_error", message: expect.stringContaining("prompt is too long") } });
    } finally {
      await proxy.close();
    }
  });

  it("makes the openai SDK throw on a failure inside an open stream", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const backend = await serve(async (_req, res) => {
      await released;
      sendJson(res, 400, { error: "prompt is too long" });
    });
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url }), keepAliveMs: 1 });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    try {
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
      const stream = await client.responses.create({ model: "qwen3:8b", input: "hi", stream: true, tools: [weather] });
      release();
      const seen: string[] = [];
      const error = await (async () => {
        for await (const event of stream) seen.push(event.type);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as Error).message).toContain("prompt is too long");
      expect(seen).toEqual(["response.created", "response.in_progress"]);
    } finally {
      await proxy.close();
    }
  });
});
