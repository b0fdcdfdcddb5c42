/**
 * The proxy's own cost (`npm run bench -- proxy`), against a loopback OpenAI-compatible
 * backend that answers instantly with a native tool call (or text).
 *
 * - Added latency: the same request sent sequentially straight to the backend and through the
 *   proxy (guarded: with tools, validated; unguarded: no tools), p50 and p99 of each; the
 *   difference is what the proxy adds. Goal: p50 ≤ 1 ms. The proxy's own /forge/stats figure
 *   (request time minus backend wait, measured inside) is printed beside it.
 * - Load: 200 concurrent streaming clients with tools for FORGE_BENCH_PROXY_SECONDS (default
 *   30) seconds: completed requests, errors, throughput and peak RSS. Backend, proxy and clients
 *   share this one process (and its one event loop), so throughput is a floor.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { percentile } from "../../src/proxy/proxy-stats.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";

const SEQUENTIAL = 3_000;
const WARMUP = 500;
const CONCURRENCY = 200;
const LOAD_SECONDS = Number(process.env.FORGE_BENCH_PROXY_SECONDS ?? 30);

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["C", "F"] } }, required: ["city"] },
    },
  },
];
const MESSAGES = [
  { role: "system", content: "You are a helpful assistant with tools." },
  { role: "user", content: "What is the weather in Lisbon?" },
];

const completion = (message: Record<string, unknown>, finish: string) =>
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "bench",
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54 },
  });
const CALL = { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Lisbon","unit":"C"}' } };
const TOOL_JSON = completion({ role: "assistant", content: null, tool_calls: [CALL] }, "tool_calls");
const TEXT_JSON = completion({ role: "assistant", content: "It is sunny and 21 °C in Lisbon." }, "stop");
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1_700_000_000, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const TOOL_SSE =
  chunk({ role: "assistant", content: null }) +
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Lisbon","unit":"C"}' } }] }) +
  chunk({}, "tool_calls") +
  "data: [DONE]\n\n";

/** An instant OpenAI-compatible backend: tools in the request → a tool call, else text. */
async function startBackend(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { tools?: unknown; stream?: boolean };
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(TOOL_SSE);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(body.tools ? TOOL_JSON : TEXT_JSON);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function post(dispatcher: Agent, url: string, body: string): Promise<void> {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
}

/** Milliseconds per request, sequentially, after a warm-up. */
async function latencies(dispatcher: Agent, url: string, body: string): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await post(dispatcher, url, body);
  const out: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await post(dispatcher, url, body);
    out.push(performance.now() - t);
  }
  return out;
}

export const suite: BenchSuite = {
  name: "proxy",
  async run() {
    const backend = await startBackend();
    const proxy = createProxy({ client: new OpenAICompatClient({ model: "bench", baseUrl: `${backend.url}/v1` }) });
    const { url } = await proxy.listen({ port: 0 });
    const dispatcher = new Agent({ connections: CONCURRENCY + 10, keepAliveTimeout: 60_000 });
    const rows: BenchRow[] = [];
    try {
      const guarded = JSON.stringify({ model: "bench", messages: MESSAGES, tools: TOOLS });
      const plain = JSON.stringify({ model: "bench", messages: MESSAGES });
      for (const [name, body] of [
        ["guarded (tools, validated)", guarded],
        ["unguarded (no tools)", plain],
      ] as const) {
        const direct = await latencies(dispatcher, `${backend.url}/v1/chat/completions`, body);
        const viaProxy = await latencies(dispatcher, `${url}/v1/chat/completions`, body);
        for (const p of [50, 99]) {
          const added = percentile(viaProxy, p)! - percentile(direct, p)!;
          rows.push({
            suite: "proxy",
            case: `added latency p${p}, ${name}`,
            value: added,
            unit: "ms",
            note: `direct ${percentile(direct, p)!.toFixed(3)} ms, via proxy ${percentile(viaProxy, p)!.toFixed(3)} ms; ${SEQUENTIAL} sequential requests${p === 50 ? "; goal <= 1 ms" : ""}`,
          });
        }
      }
      const inside = proxy.stats().addedLatencyMs;
      rows.push({
        suite: "proxy",
        case: "added latency p50 / p99 inside the proxy",
        value: inside.p50 ?? NaN,
        unit: "ms",
        note: `p99 ${inside.p99} ms (/forge/stats: request time minus backend wait)`,
        extra: { p99: inside.p99 ?? NaN },
      });
      rows.push(...(await load(dispatcher, url)));
    } finally {
      await dispatcher.close();
      await proxy.close();
      backend.server.closeAllConnections();
      backend.server.close();
    }
    return rows;
  },
  readme(rows) {
    const added = (name: string) => `${fig(row(rows, `added latency p50, ${name}`).value)} / ${fig(row(rows, `added latency p99, ${name}`).value)} ms`;
    const inside = row(rows, "added latency p50 / p99 inside the proxy");
    const load = row(rows, `${CONCURRENCY} concurrent streaming clients, ${LOAD_SECONDS} s`);
    const rss = row(rows, `peak RSS during the ${CONCURRENCY}-client load`);
    return [
      mdRow("proxy", "added latency vs calling the backend directly, p50 / p99, guarded (tools, validated)", added("guarded (tools, validated)"), "p50 ≤ 1 ms"),
      mdRow("proxy", "added latency p50 / p99, unguarded (no tools, passed through)", added("unguarded (no tools)"), "p50 ≤ 1 ms"),
      mdRow("proxy", "time inside the proxy (request time minus backend wait, `/forge/stats`), p50 / p99", `${fig(inside.value)} / ${fig(inside.extra?.p99 ?? NaN)} ms`, ""),
      mdRow(
        "proxy",
        `${CONCURRENCY} concurrent streaming clients for ${LOAD_SECONDS} s, instant loopback backend`,
        `${fig(load.value)} req/s, ${load.extra?.errors} errors, peak RSS ${fig(rss.value)} MiB`,
        "0 errors",
      ),
    ];
  },
};

/** CONCURRENCY clients, each streaming guarded requests back to back until the deadline. */
async function load(dispatcher: Agent, url: string): Promise<BenchRow[]> {
  const body = JSON.stringify({ model: "bench", messages: MESSAGES, tools: TOOLS, stream: true });
  const deadline = performance.now() + LOAD_SECONDS * 1000;
  let done = 0;
  let errors = 0;
  let firstError = "";
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        try {
          const res = await request(`${url}/v1/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher });
          const text = await res.body.text();
          if (res.statusCode !== 200 || !text.includes('"tool_calls"') || !text.endsWith("data: [DONE]\n\n")) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
          done++;
        } catch (error) {
          errors++;
          firstError ||= (error as Error).message;
        }
      }
    }),
  );
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  return [
    {
      suite: "proxy",
      case: `${CONCURRENCY} concurrent streaming clients, ${LOAD_SECONDS} s`,
      value: done / seconds,
      unit: "req/s",
      note: `${done} completed, ${errors} errors${firstError ? ` (first: ${firstError})` : ""}`,
      extra: { errors },
    },
    { suite: "proxy", case: `peak RSS during the ${CONCURRENCY}-client load`, value: peakRss / 1024 / 1024, unit: "MiB", note: "backend, proxy and clients in one process" },
  ];
}
