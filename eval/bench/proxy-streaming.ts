/**
 * Guarded streaming in the proxy bench: a loopback OpenAI-compatible backend that streams its
 * answer word by word at a fixed WORD_MS, asked with tools (so the proxy guards it).
 *
 * - Time to first content token of a 100-word prose answer, straight to the backend and through
 *   the proxy, p50/p95 (each run stops reading after the first token). Goal: proxy p50 ≤ direct + 5 ms.
 * - A prose-then-call answer (Hermes `<tool_call>` after 20 words): the delay from the backend's
 *   last byte to the client's first `tool_calls` delta, p50/p95; each run also checks that the
 *   prose reached the client before the call started.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { percentile } from "../../src/proxy/proxy-stats.js";
import { fig, mdRow, row, type BenchRow } from "./harness.js";

const WORD_MS = 20;
const PROSE_WORDS = 100;
const CALL_PROSE_WORDS = 20;
const TTFT_RUNS = 100;
const WARMUP_RUNS = 20;
const CALL_RUNS = 15;
const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Lisbon"}}</tool_call>';
const VOCABULARY = ["the", "weather", "in", "Lisbon", "is", "sunny", "and", "warm", "today", "with", "a", "light", "breeze", "from", "sea"];

const sse = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1_700_000_000, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Word deltas as tokenizers cut them: the first bare, the rest with a leading space. */
const words = (n: number) => Array.from({ length: n }, (_, i) => `${i === 0 ? "" : " "}${VOCABULARY[i % VOCABULARY.length]}`);

export interface PacedBackend {
  url: string;
  /** performance.now() when the latest answer's last byte was written. */
  lastByteAt: number;
  close(): void;
}

/** `prose` requests (user message "prose") get PROSE_WORDS words; others get prose, then a Hermes call. */
export async function startPacedBackend(): Promise<PacedBackend> {
  const backend: PacedBackend = { url: "", lastByteAt: 0, close: () => (server.closeAllConnections(), server.close()) };
  const server: Server = createServer((req, res) => {
    // The proxy asks for the model's window first (GET /v1/models, as vLLM answers it).
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "bench", object: "model", max_model_len: 32_768 }] }));
      return;
    }
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { messages: { content: string }[] };
      const deltas = body.messages.at(-1)?.content === "prose" ? words(PROSE_WORDS) : [...words(CALL_PROSE_WORDS), ` ${CALL}`];
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sse({ role: "assistant" }));
      let i = 0;
      const next = () => {
        if (res.destroyed) return;
        if (i < deltas.length) {
          res.write(sse({ content: deltas[i++] }));
          timer = setTimeout(next, WORD_MS);
          return;
        }
        res.end(sse({}, "stop") + "data: [DONE]\n\n");
        backend.lastByteAt = performance.now();
      };
      let timer = setTimeout(next, 0);
      res.on("close", () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  backend.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return backend;
}

/** Read a chat-completions SSE stream, calling `onDelta` per delta until it returns true (then the request is dropped). */
async function readStream(dispatcher: Agent, url: string, content: string, onDelta: (delta: { content?: string; tool_calls?: unknown[] }) => boolean): Promise<void> {
  const controller = new AbortController();
  const body = JSON.stringify({ model: "bench", stream: true, tools: TOOLS, messages: [{ role: "user", content }] });
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher, signal: controller.signal });
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${await res.body.text()}`);
  let buffer = "";
  try {
    for await (const chunk of res.body) {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!event.startsWith("data: {")) continue;
        const delta = (JSON.parse(event.slice(6)) as { choices: { delta?: { content?: string; tool_calls?: unknown[] } }[] }).choices[0]?.delta;
        if (delta && onDelta(delta)) return controller.abort();
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  }
}

async function firstTokenMs(dispatcher: Agent, url: string): Promise<number> {
  const started = performance.now();
  let at = NaN;
  await readStream(dispatcher, url, "prose", (d) => (d.content ? ((at = performance.now() - started), true) : false));
  return at;
}

/** Milliseconds from the backend's last byte to the first tool_calls delta; throws when prose did not come first. */
async function callDelayMs(dispatcher: Agent, url: string, backend: PacedBackend): Promise<number> {
  let prose = "";
  let at = NaN;
  await readStream(dispatcher, url, "call", (d) => {
    if (d.content) prose += d.content;
    if (!d.tool_calls) return false;
    at = performance.now() - backend.lastByteAt;
    return true;
  });
  if (!prose.startsWith("the weather in Lisbon")) throw new Error(`the prose did not reach the client before the call: ${JSON.stringify(prose)}`);
  return at;
}

/**
 * @example
 * rows.push(...(await streamingRows(dispatcher, `${proxyUrl}/v1/chat/completions`, backend)));
 */
export async function streamingRows(dispatcher: Agent, viaProxy: string, backend: PacedBackend): Promise<BenchRow[]> {
  const direct = `${backend.url}/v1/chat/completions`;
  for (let i = 0; i < WARMUP_RUNS; i++) await Promise.all([firstTokenMs(dispatcher, viaProxy), firstTokenMs(dispatcher, direct)]);
  // Interleaved, one after the other: a busy machine's drift hits both series alike.
  const straight: number[] = [];
  const proxied: number[] = [];
  for (let i = 0; i < TTFT_RUNS; i++) {
    straight.push(await firstTokenMs(dispatcher, direct));
    proxied.push(await firstTokenMs(dispatcher, viaProxy));
  }
  const calls: number[] = [];
  for (let i = 0; i < CALL_RUNS; i++) calls.push(await callDelayMs(dispatcher, viaProxy, backend));
  const setup = `tools in the request, ${PROSE_WORDS} words at ${WORD_MS} ms a word`;
  return [
    ...[50, 95].map((p) => ({
      suite: "proxy",
      case: `time to first content token p${p}, guarded stream`,
      value: percentile(proxied, p)!,
      unit: "ms",
      note: `direct ${percentile(straight, p)!.toFixed(2)} ms; ${setup}; ${TTFT_RUNS} runs, interleaved${p === 50 ? "; goal <= direct + 5 ms" : ""}`,
      extra: { direct: percentile(straight, p)! },
    })),
    ...[50, 95].map((p) => ({
      suite: "proxy",
      case: `prose-then-call: backend's last byte to the client's call p${p}`,
      value: percentile(calls, p)!,
      unit: "ms",
      note: `${CALL_PROSE_WORDS} words of prose, then a Hermes call; prose reached the client first in every run; ${CALL_RUNS} runs`,
    })),
  ];
}

/** README rows for the streaming figures. */
export function streamingReadme(rows: BenchRow[]): string[] {
  const ttft = (p: number) => row(rows, `time to first content token p${p}, guarded stream`);
  const call = (p: number) => row(rows, `prose-then-call: backend's last byte to the client's call p${p}`).value;
  return [
    mdRow(
      "proxy",
      `time to first content token, guarded stream (tools; ${PROSE_WORDS} words at ${WORD_MS} ms), p50 / p95, through the proxy vs direct`,
      `${fig(ttft(50).value)} / ${fig(ttft(95).value)} ms vs ${fig(ttft(50).extra?.direct ?? NaN)} / ${fig(ttft(95).extra?.direct ?? NaN)} ms`,
      "p50 ≤ direct + 5 ms",
    ),
    mdRow("proxy", "prose-then-call: backend's last byte to the client's call, p50 / p95 (prose reaches the client first)", `${fig(call(50))} / ${fig(call(95))} ms`, ""),
  ];
}
