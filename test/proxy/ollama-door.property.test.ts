/**
 * The Ollama door as properties, over real sockets:
 * - however the backend's answer is split into stream lines, and however the proxy's own NDJSON
 *   is cut into reads, a streamed /api/chat gives the calls and prose the unstreamed one does;
 * - unknown fields anywhere in an /api/chat body never change what the proxy reads from it;
 * - /api/chat → backend → /api/chat keeps tool names and object arguments exactly, and the call
 *   ids the client sent, on the Ollama wire and on the OpenAI one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readLines } from "../../src/clients/ndjson.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { parseOllamaChatRequest } from "../../src/proxy/ollama-request.js";
import { openaiCompletion } from "../clients/support/wire.js";
import { sendJson, sendNdjson, useFakeServers } from "../clients/support/fake-server.js";
import { hermes, WEATHER_SCHEMA, windowAnswer, WINDOW_PATHS } from "./support/harness.js";

const serve = useFakeServers();
const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];

type Line = Record<string, unknown> & { message?: { content?: string; thinking?: string; tool_calls?: { id?: string; function: { name: string; arguments: unknown } }[] } };

/** A proxy in front of a loopback Ollama that streams `text` in the given pieces (or answers it whole). */
async function rig(answer: (body: Record<string, unknown>) => { pieces: string[]; calls?: { name: string; arguments: unknown }[] }, wire: "ollama" | "openai" = "ollama") {
  const backend = await serve((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "m" }] });
    if (WINDOW_PATHS.has(req.path)) return sendJson(res, 200, windowAnswer(req.path, 32_768));
    const { pieces, calls } = answer(req.body as Record<string, unknown>);
    if (wire === "openai") return sendJson(res, 200, openaiCompletion({ content: pieces.join(""), toolCalls: calls?.map((c) => ({ name: c.name, args: c.arguments })) }, "m"));
    const line = (message: Record<string, unknown>, done = false) => ({ model: "m", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done });
    const tail = { ...line({}, true), done_reason: "stop", prompt_eval_count: 5, eval_count: 3 };
    const toolCalls = calls?.map((c) => ({ function: c }));
    if (req.body.stream === false) return sendJson(res, 200, { ...tail, message: { role: "assistant", content: pieces.join(""), ...(toolCalls ? { tool_calls: toolCalls } : {}) } });
    sendNdjson(res, [...pieces.map((p) => line({ content: p })), ...(toolCalls ? [line({ tool_calls: toolCalls })] : []), tail]);
  });
  const client = wire === "ollama" ? new OllamaClient({ model: "m", baseUrl: backend.url, think: false }) : new OpenAICompatClient({ model: "m", baseUrl: `${backend.url}/v1` });
  const proxy = createProxy({ client });
  const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
  return { url, backend, close: () => proxy.close() };
}

const post = (url: string, body: Record<string, unknown>) => fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", ...body }) });

/** The proxy's NDJSON bytes delivered in the given reads, as lines. */
async function linesOf(bytes: Uint8Array, cuts: number[]): Promise<Line[]> {
  const reads: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) (reads.push(bytes.subarray(from, cut)), (from = cut));
  reads.push(bytes.subarray(from));
  const out: Line[] = [];
  for await (const line of readLines((async function* () {
    yield* reads;
  })())) if (line !== "") out.push(JSON.parse(line) as Line);
  return out;
}

const callsOf = (lines: readonly Line[]) => lines.flatMap((l) => l.message?.tool_calls ?? []).map((c) => c.function);
const proseOf = (lines: readonly Line[]) => lines.map((l) => l.message?.content ?? "").join("");

/** Cut `text` at the given offsets (on code-unit boundaries that keep surrogate pairs whole). */
function split(text: string, at: number[]): string[] {
  const cuts = [...new Set(at.map((a) => a % (text.length + 1)))].filter((c) => !(text.charCodeAt(c - 1) >= 0xd800 && text.charCodeAt(c - 1) <= 0xdbff)).sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const c of cuts) (out.push(text.slice(from, c)), (from = c));
  out.push(text.slice(from));
  return out.filter((p) => p !== "");
}

const prose = fc.string({ unit: fc.constantFrom("a", "b", " ", ".", "\n", "é", "{", "}", "<", ">", "`", "\"", "😀"), maxLength: 60 });
const answerText = fc.oneof(
  prose,
  fc.tuple(prose, fc.constantFrom("Oslo", "São Paulo", "東京")).map(([p, city]) => `${p}\n${hermes("get_weather", { city })}`),
  fc.constantFrom("Oslo", "Paris").map((city) => `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "${city}"}}]`),
);

describe("the Ollama door, as properties", () => {
  it("any split of the backend's stream and of the proxy's own lines gives the unstreamed answer's calls and prose", async () => {
    let current = { text: "", at: [] as number[] };
    const r = await rig(() => ({ pieces: split(current.text, current.at) }));
    try {
      await fc.assert(
        fc.asyncProperty(answerText, fc.array(fc.nat(), { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 12 }), async (text, at, reads) => {
          current = { text, at };
          const whole = (await (await post(r.url, { messages: [{ role: "user", content: "Weather?" }], tools, stream: false })).json()) as Line;
          const streamed = await linesOf(new Uint8Array(await (await post(r.url, { messages: [{ role: "user", content: "Weather?" }], tools })).arrayBuffer()), reads);
          expect(streamed.at(-1)).toMatchObject({ done: true, done_reason: "stop" });
          expect(callsOf(streamed)).toEqual(callsOf([whole]));
          // Prose beside a call goes out live, as it came; the unstreamed answer trims it.
          expect(proseOf(streamed).trim()).toBe(proseOf([whole]).trim());
        }),
        { numRuns: 60 },
      );
    } finally {
      await r.close();
    }
  });

  const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !["role", "content", "images", "tool_calls", "tool_name", "tool_call_id", "function", "type", "name", "arguments", "id", "description", "parameters", "__proto__"].includes(k)), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  const TOP = ["model", "messages", "tools", "stream", "format", "think", "options", "keep_alive", "__proto__"];

  it("unknown fields anywhere in the body are accepted and change nothing the proxy reads", () => {
    const base = {
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: "", tool_calls: [{ function: { name: "get_weather", arguments: { city: "Oslo" } } }] },
        { role: "tool", tool_name: "get_weather", content: "12C" },
      ],
      tools,
      stream: false,
    };
    const plain = parseOllamaChatRequest(structuredClone(base));
    const put = (target: Record<string, unknown>, fields: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(fields)) Object.defineProperty(target, k, { value: v, enumerable: true, writable: true, configurable: true });
    };
    fc.assert(
      fc.property(extra.map((e) => Object.fromEntries(Object.entries(e).filter(([k]) => !TOP.includes(k)))), fc.array(extra, { minLength: 4, maxLength: 4 }), extra, extra, extra, (top, perMessage, call, fn, tool) => {
        const body = structuredClone(base) as Record<string, unknown> & typeof base;
        put(body, top);
        body.messages.forEach((m, i) => put(m, perMessage[i]!));
        put(body.messages[2]!.tool_calls![0]!, call);
        put(body.messages[2]!.tool_calls![0]!.function, fn);
        put(body.tools[0]!, tool);
        const got = parseOllamaChatRequest(body);
        expect([got.messages, got.tools, got.format, got.stream]).toEqual([plain.messages, plain.tools, plain.format, plain.stream]);
      }),
      { numRuns: 300 },
    );
  });

  const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,30}$/);
  const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "__proto__"), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
  const id = fc.option(fc.stringMatching(/^call_[a-z0-9]{1,12}$/), { nil: undefined });

  it.each(["ollama", "openai"] as const)("a round trip through the %s wire keeps tool names, object arguments and the client's call ids", async (wire) => {
    let reply: { name: string; arguments: unknown }[] = [];
    const r = await rig(() => ({ pieces: [], calls: reply }), wire);
    try {
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(fc.record({ name, args, id }), { minLength: 1, maxLength: 3, selector: (c) => c.name }), async (calls) => {
          // Parsed back from JSON, as both the backend and the caller see it (-0 becomes 0).
          const plain = calls.map((c) => ({ ...c, args: JSON.parse(JSON.stringify(c.args)) as Record<string, unknown> }));
          reply = plain.map((c) => ({ name: c.name, arguments: c.args }));
          const offered = plain.map((c) => ({ type: "function", function: { name: c.name, description: "", parameters: { type: "object" } } }));
          const history = [
            { role: "user", content: "go" },
            { role: "assistant", content: "", tool_calls: plain.map((c) => ({ ...(c.id === undefined ? {} : { id: c.id }), function: { name: c.name, arguments: c.args } })) },
            ...plain.map((c) => ({ role: "tool", tool_name: c.name, content: `result of ${c.name}`, ...(c.id === undefined ? {} : { tool_call_id: c.id }) })),
          ];
          const before = r.backend.requests.length;
          const answer = (await (await post(r.url, { messages: history, tools: offered, stream: false })).json()) as Line;
          const sent = r.backend.requests.slice(before).find((q) => q.method === "POST" && !WINDOW_PATHS.has(q.path))!.body as { messages: Record<string, unknown>[] };
          const wireCalls = (sent.messages[1]!.tool_calls as { id?: string; function: { name: string; arguments: unknown } }[]).map((c) => ({
            id: c.id,
            name: c.function.name,
            args: typeof c.function.arguments === "string" ? JSON.parse(c.function.arguments) : c.function.arguments,
          }));
          expect(wireCalls.map(({ name: n, args: a }) => ({ name: n, args: a }))).toEqual(plain.map(({ name: n, args: a }) => ({ name: n, args: a })));
          if (wire === "openai") {
            plain.forEach((c, i) => c.id !== undefined && expect(wireCalls[i]!.id).toBe(c.id));
            // Every result answers its own call.
            expect(sent.messages.slice(2).map((m) => m.tool_call_id)).toEqual(wireCalls.map((c) => c.id));
          }
          expect(callsOf([answer]).map((f) => ({ name: f.name, args: f.arguments }))).toEqual(plain.map(({ name: n, args: a }) => ({ name: n, args: a })));
        }),
        { numRuns: 40 },
      );
    } finally {
      await r.close();
    }
  });
});
