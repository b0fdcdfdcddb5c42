/**
 * The loopback backend of the proxy-at-scale bench (proxy-scale.ts), run as its own process so
 * its work is not billed to the proxy or the clients: `node --import tsx eval/bench/scale-backend.ts
 * [n_ctx]` prints `scale backend listening on <url>`.
 *
 * It speaks llama-server's OpenAI side: POST /v1/chat/completions (JSON or SSE), GET /v1/models,
 * and GET /props with `default_generation_settings.n_ctx`, so the proxy learns a window as it
 * does from a real llama-server. /apply-template and /tokenize answer 404 (llamafile's way): the
 * window is large enough that the proxy never needs an exact count, and a hit would show in
 * /bench/stats.
 *
 * What it answers is chosen by the request itself: a user message holding `@bench {json}`
 * (a {@link Directive}) gets that stream; any other request gets an instant call to the first
 * offered tool whose required arguments it can fill (or prose when none is offered).
 * GET /bench/stats reports the chat requests served and the body of the latest one, which the
 * bench posts straight here as the "direct" request of a translated API (Anthropic, Responses).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CASES } from "./stream-judge.bench.js";

export interface Directive {
  /** prose: prose with code fences and JSON snippets; write_file: a bare-JSON call as text; words: the word list of {@link pacedWords}. */
  answer: "prose" | "write_file" | "words";
  /** prose and write_file: characters in all. words: deltas. */
  size: number;
  /** Characters per delta (prose, write_file). */
  delta?: number;
  /** Deltas a second; absent: as fast as the socket takes them. */
  perSecond?: number;
}

/** The marker a user message carries a directive behind. */
export const DIRECTIVE = "@bench ";

const VOCABULARY = ["the", "weather", "in", "Lisbon", "is", "sunny", "and", "warm", "today", "with", "a", "light", "breeze", "from", "sea"];

/** `n` word deltas as tokenizers cut them: the first bare, the rest with a leading space. */
export const pacedWords = (n: number): string[] => Array.from({ length: n }, (_, i) => `${i === 0 ? "" : " "}${VOCABULARY[i % VOCABULARY.length]}`);

/** The deltas of a directive's answer, the same text the bench checks the client received. */
export function directiveDeltas(d: Directive): string[] {
  if (d.answer === "words") return pacedWords(d.size);
  const text = CASES[d.answer === "prose" ? 0 : 1]!.answer(d.size);
  const step = d.delta ?? 4;
  const out: string[] = [];
  for (let i = 0; i < text.length; i += step) out.push(text.slice(i, i + step));
  return out;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The directive in the latest user message that has one. */
function directiveOf(messages: unknown): Directive | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m: unknown = messages[i];
    if (!isObject(m) || m.role !== "user") continue;
    const content = m.content;
    const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((p: unknown) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("") : "";
    const at = text.indexOf(DIRECTIVE);
    if (at >= 0) return JSON.parse(text.slice(at + DIRECTIVE.length)) as Directive;
  }
  return undefined;
}

/** A value a schema accepts, for the simple schemas agents' tools require; undefined when unsure. */
function sample(schema: unknown, depth = 0): unknown {
  if (!isObject(schema) || depth > 4) return undefined;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return schema.pattern === undefined && schema.format === undefined && (typeof schema.minLength !== "number" || schema.minLength <= 5) ? "bench" : undefined;
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return typeof schema.minItems === "number" && schema.minItems > 0 ? undefined : [];
    case "object":
      return argumentsFor(schema, depth + 1);
    default:
      return undefined;
  }
}

/** An object holding every required property (with a sampled value), or undefined. */
function argumentsFor(schema: Json, depth = 0): Json | undefined {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const out: Json = {};
  for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
    const value = sample(properties[name], depth);
    if (value === undefined) return undefined;
    out[name] = value;
  }
  return out;
}

/** The first offered tool it can call with valid arguments. */
function callFor(tools: unknown): { name: string; arguments: string } | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const t of tools) {
    const fn = isObject(t) && isObject(t.function) ? t.function : undefined;
    if (!fn || typeof fn.name !== "string") continue;
    const args = argumentsFor(isObject(fn.parameters) ? fn.parameters : {});
    if (args) return { name: fn.name, arguments: JSON.stringify(args) };
  }
  return undefined;
}

const ID = "chatcmpl-scale";
const chunk = (delta: Json, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: ID, object: "chat.completion.chunk", created: 1_700_000_000, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
// The per-delta frame without JSON.stringify of the whole object: the backend's cost is not measured, but it shares the CPUs.
const HEAD = `data: {"id":"${ID}","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"content":`;
const contentFrame = (text: string) => `${HEAD}${JSON.stringify(text)}},"finish_reason":null}]}\n\n`;
const END = chunk({}, "stop") + "data: [DONE]\n\n";
const USAGE = { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54 };

function instant(res: ServerResponse, body: Json): void {
  const call = callFor(body.tools);
  if (body.stream) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (!call) return void res.end(chunk({ role: "assistant" }) + contentFrame("Done.") + END);
    res.end(
      chunk({ role: "assistant", content: null }) +
        chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: call.name, arguments: "" } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: call.arguments } }] }) +
        chunk({}, "tool_calls") +
        "data: [DONE]\n\n",
    );
    return;
  }
  const message = call ? { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: call }] } : { role: "assistant", content: "Done." };
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: ID, object: "chat.completion", created: 1_700_000_000, model: "bench", choices: [{ index: 0, message, finish_reason: call ? "tool_calls" : "stop" }], usage: USAGE }));
}

/** A directive's answer as SSE: paced by a schedule (not a drifting timer chain), or as fast as the socket drains. */
function directed(res: ServerResponse, d: Directive): void {
  const parts = directiveDeltas(d);
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(chunk({ role: "assistant" }));
  let i = 0;
  if (d.perSecond !== undefined) {
    const every = 1000 / d.perSecond;
    const start = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const next = () => {
      if (res.destroyed) return;
      if (i >= parts.length) return void res.end(END);
      res.write(contentFrame(parts[i++]!));
      timer = setTimeout(next, Math.max(0, start + i * every - performance.now()));
    };
    res.on("close", () => clearTimeout(timer));
    next();
    return;
  }
  const pump = () => {
    while (i < parts.length) {
      let batch = "";
      for (const end = Math.min(parts.length, i + 256); i < end; i++) batch += contentFrame(parts[i]!);
      if (!res.write(batch)) return void res.once("drain", pump);
    }
    res.end(END);
  };
  pump();
}

export async function startScaleBackend(nCtx: number): Promise<{ url: string; close(): void }> {
  const stats = { served: 0, unexpected: 0, unexpectedPaths: [] as string[], last: "" };
  const unexpected = (what: string) => {
    stats.unexpected++;
    if (stats.unexpectedPaths.length < 20) stats.unexpectedPaths.push(what);
  };
  const server = createServer((req, res) => {
    const route = (req.url ?? "/").split("?")[0];
    if (req.method === "GET") {
      const json = (v: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(v));
      if (route === "/props") return void json({ default_generation_settings: { n_ctx: nCtx }, total_slots: 1 });
      if (route === "/v1/models") return void json({ object: "list", data: [{ id: "bench", object: "model" }] });
      if (route === "/bench/stats") return void json(stats);
      unexpected(`GET ${req.url}`);
      return void res.writeHead(404).end();
    }
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      if (route !== "/v1/chat/completions") {
        unexpected(`${req.method} ${req.url}`);
        return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
      }
      const text = Buffer.concat(parts).toString("utf8");
      stats.served++;
      // Only bodies of ordinary size are kept: the direct twin of a translated request.
      stats.last = text.length < 1_000_000 ? text : "";
      const body = JSON.parse(text) as Json;
      const d = directiveOf(body.messages);
      if (d) directed(res, d);
      else instant(res, body);
    });
  });
  server.keepAliveTimeout = 120_000;
  server.maxConnections = 100_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => (server.closeAllConnections(), server.close()),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const backend = await startScaleBackend(Number(process.argv[2] ?? 1_048_576));
  console.log(`scale backend listening on ${backend.url}`);
  process.once("SIGTERM", () => (backend.close(), process.exit(0)));
}
