/**
 * The proxy's own cost (`npm run bench -- proxy`), against a loopback OpenAI-compatible
 * backend that answers instantly with a native tool call (or text).
 *
 * - Added latency: the same request sent sequentially straight to the backend and through the
 *   proxy (guarded: with tools, validated; unguarded: no tools; guarded and routed over a fleet
 *   of two backends; structured output: no tools, the answer checked against a json_schema),
 *   p50 and p99 of each; the difference is what the proxy adds. Goal: p50 ≤ 1 ms. The proxy's
 *   own /forge/stats figure (request time minus backend wait, measured inside) is printed beside
 *   it, and so is the floor: what a minimal pass-through proxy (pass-through-proxy.ts) adds,
 *   measured the same way in the same run, i.e. the cost of any HTTP hop on this machine.
 * - Large tool sets (proxy-many-tools.ts): 1,000 and 5,000 tools, new and repeated: added latency,
 *   the event-loop delay meanwhile, and the schemas each request checked and compiled.
 * - Load: 200 concurrent streaming clients with tools for FORGE_BENCH_PROXY_SECONDS (default
 *   30) seconds: completed requests, errors, throughput and peak RSS. Backend, proxy and clients
 *   share this one process (and its one event loop), so throughput is a floor.
 * - Guarded streaming (proxy-streaming.ts): time to first content token through the proxy vs
 *   direct, and the delay from the backend's last byte to a prose-then-call answer's call.
 * - At scale (proxy-scale.ts; also `npm run bench -- proxy-scale` alone): the CLI proxy, the
 *   backend and the pass-through each in its own process; agents' first requests, large tool
 *   sets, long answers, 1,000 concurrent streams.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import type { ProxyConfig } from "../../src/proxy/fleet/proxy-config.js";
import { percentile } from "../../src/proxy/proxy-stats.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";
import { startPassThroughProxy } from "./pass-through-proxy.js";
import { manyToolsReadme, manyToolsRows } from "./proxy-many-tools.js";
import { startPacedBackend, streamingReadme, streamingRows } from "./proxy-streaming.js";
import { SCALE_IN_PROXY_SUITE, scaleReadme, scaleRows } from "./proxy-scale.js";

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
const WEATHER = '{"city":"Lisbon","tempC":21}';
const WEATHER_JSON = completion({ role: "assistant", content: WEATHER }, "stop");
const weatherFormat = (tempC: string) => ({
  type: "json_schema",
  json_schema: {
    name: "weather",
    strict: true,
    schema: { type: "object", properties: { city: { type: "string" }, tempC: { type: tempC } }, required: ["city", "tempC"], additionalProperties: false },
  },
});
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1_700_000_000, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const TOOL_SSE =
  chunk({ role: "assistant", content: null }) +
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Lisbon","unit":"C"}' } }] }) +
  chunk({}, "tool_calls") +
  "data: [DONE]\n\n";

interface Backend {
  url: string;
  server: Server;
  /** Chat completions answered. */
  served: number;
}

/**
 * An instant OpenAI-compatible backend: tools in the request → a tool call; else response_format
 * → the weather as JSON text; else prose. A GET (a health probe) gets its model list.
 */
async function startBackend(): Promise<Backend> {
  const server = createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(200, { "content-type": "application/json" }).end('{"object":"list","data":[{"id":"bench","object":"model"}]}');
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { tools?: unknown; stream?: boolean; response_format?: unknown };
      backend.served++;
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(TOOL_SSE);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(body.tools ? TOOL_JSON : body.response_format ? WEATHER_JSON : TEXT_JSON);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const backend: Backend = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, served: 0 };
  return backend;
}

const stopBackend = (backend: Backend) => {
  backend.server.closeAllConnections();
  backend.server.close();
};

async function post(dispatcher: Agent, url: string, body: string): Promise<{ headers: IncomingHttpHeaders; text: string }> {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  return { headers: res.headers, text };
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

interface LatencyCase {
  /** The case name's tail: `added latency p50, ${name}`. */
  name: string;
  direct: string;
  via: string;
  body: string;
  /** What `via` is, in the notes. */
  hop: "proxy" | "pass-through";
  /** Further notes of the p50 row, made once both series are measured. */
  p50Notes?: () => string[];
}

/** The case's request straight to the backend, then through `via`: p50 and p99 of the difference. */
async function addedLatency(dispatcher: Agent, c: LatencyCase): Promise<BenchRow[]> {
  const direct = await latencies(dispatcher, c.direct, c.body);
  const via = await latencies(dispatcher, c.via, c.body);
  const extra = c.p50Notes?.() ?? [];
  return [50, 99].map((p) => ({
    suite: "proxy",
    case: `added latency p${p}, ${c.name}`,
    value: percentile(via, p)! - percentile(direct, p)!,
    unit: "ms",
    note: [
      `direct ${percentile(direct, p)!.toFixed(3)} ms, via ${c.hop} ${percentile(via, p)!.toFixed(3)} ms`,
      `${SEQUENTIAL} sequential requests`,
      ...(p === 50 ? [...(c.hop === "proxy" ? ["goal <= 1 ms"] : []), ...extra] : []),
    ].join("; "),
  }));
}

/** Two backends serving one model, least busy first. */
const fleetConfig = (a: Backend, b: Backend): ProxyConfig => ({
  backends: {
    a: { backend: "openai", baseUrl: `${a.url}/v1`, model: "bench", maxConcurrent: 4 },
    b: { backend: "openai", baseUrl: `${b.url}/v1`, model: "bench", maxConcurrent: 4 },
  },
  models: { bench: { backends: ["a", "b"] } },
});

/**
 * The structured-output case measures a real check: a conforming answer comes back as the JSON
 * alone on the first attempt, and the same answer against a schema it breaks is retried.
 */
async function checkStructuredOutputIsLive(dispatcher: Agent, url: string): Promise<void> {
  const ok = await post(dispatcher, url, JSON.stringify({ model: "bench", messages: MESSAGES, response_format: weatherFormat("number") }));
  const content = (JSON.parse(ok.text) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
  if (content !== WEATHER || ok.headers["x-forge-attempts"] !== "1") throw new Error(`structured output not accepted as is: ${ok.text.slice(0, 200)}`);
  const broken = await post(dispatcher, url, JSON.stringify({ model: "bench", messages: MESSAGES, response_format: weatherFormat("string") }));
  if (Number(broken.headers["x-forge-attempts"]) < 2) throw new Error(`a schema violation was not retried: ${broken.text.slice(0, 200)}`);
}

export const suite: BenchSuite = {
  name: "proxy",
  async run() {
    const backend = await startBackend();
    const second = await startBackend();
    // The window as a served model would report it (the fake backend lists no max_model_len).
    const proxy = createProxy({ client: new OpenAICompatClient({ model: "bench", baseUrl: `${backend.url}/v1` }), contextLength: 32_768 });
    const { url } = await proxy.listen({ port: 0 });
    const fleet = createProxy({ config: fleetConfig(backend, second), contextLength: 32_768 });
    const routed = await fleet.listen({ port: 0 });
    const floor = await startPassThroughProxy(backend.url);
    const paced = await startPacedBackend();
    const pacedProxy = createProxy({ client: new OpenAICompatClient({ model: "bench", baseUrl: `${paced.url}/v1` }) });
    const pacedUrl = (await pacedProxy.listen({ port: 0 })).url;
    const dispatcher = new Agent({ connections: CONCURRENCY + 10, keepAliveTimeout: 60_000 });
    const rows: BenchRow[] = [];
    try {
      const chat = (base: string) => `${base}/v1/chat/completions`;
      const direct = chat(backend.url);
      const guarded = JSON.stringify({ model: "bench", messages: MESSAGES, tools: TOOLS });
      const plain = JSON.stringify({ model: "bench", messages: MESSAGES });
      const structured = JSON.stringify({ model: "bench", messages: MESSAGES, response_format: weatherFormat("number") });
      for (const [name, body] of [
        ["guarded (tools, validated)", guarded],
        ["unguarded (no tools)", plain],
      ] as const) {
        rows.push(...(await addedLatency(dispatcher, { name, direct, via: chat(url), body, hop: "proxy" })));
      }
      // Read before the structured-output case goes through the same proxy: this row is the two cases above.
      const inside = proxy.stats().addedLatencyMs;
      rows.push(...(await addedLatency(dispatcher, { name: "minimal pass-through proxy (floor)", direct, via: chat(floor.url), body: guarded, hop: "pass-through" })));
      const secondBefore = second.served;
      rows.push(
        ...(await addedLatency(dispatcher, {
          name: "guarded, routed over a 2-backend fleet",
          direct,
          via: chat(routed.url),
          body: guarded,
          hop: "proxy",
          p50Notes: () => [`backend b answered ${second.served - secondBefore} of ${WARMUP + SEQUENTIAL}`],
        })),
      );
      await checkStructuredOutputIsLive(dispatcher, chat(url));
      rows.push(
        ...(await addedLatency(dispatcher, {
          name: "structured output (json_schema checked)",
          direct,
          via: chat(url),
          body: structured,
          hop: "proxy",
          p50Notes: () => ["no tools; the answer is extracted, parsed and checked against the schema"],
        })),
      );
      rows.push({
        suite: "proxy",
        case: "added latency p50 / p99 inside the proxy",
        value: inside.p50 ?? NaN,
        unit: "ms",
        note: `p99 ${inside.p99} ms (/forge/stats: request time minus backend wait)`,
        extra: { p99: inside.p99 ?? NaN },
      });
      rows.push(...(await manyToolsRows(dispatcher, { backend: backend.url, floor: floor.url })));
      rows.push(...(await streamingRows(dispatcher, chat(pacedUrl), paced)));
      rows.push(...(await load(dispatcher, url)));
    } finally {
      await pacedProxy.close();
      paced.close();
      await dispatcher.close();
      await floor.close();
      await fleet.close();
      await proxy.close();
      stopBackend(backend);
      stopBackend(second);
    }
    // Its own processes (proxy CLI, backend, pass-through): after this process's servers are gone.
    if (SCALE_IN_PROXY_SUITE) rows.push(...(await scaleRows()));
    return rows;
  },
  readme(rows) {
    const added = (name: string) => `${fig(row(rows, `added latency p50, ${name}`).value)} / ${fig(row(rows, `added latency p99, ${name}`).value)} ms`;
    const inside = row(rows, "added latency p50 / p99 inside the proxy");
    const load = row(rows, `${CONCURRENCY} concurrent streaming clients, ${LOAD_SECONDS} s`);
    const rss = row(rows, `peak RSS during the ${CONCURRENCY}-client load`);
    return [
      mdRow("proxy", "added latency vs calling the backend directly, p50 / p99, guarded (tools, validated)", added("guarded (tools, validated)"), "p50 ≤ 1 ms"),
      mdRow("proxy", "added latency p50 / p99, minimal pass-through proxy (floor: node:http + undici, bytes piped)", added("minimal pass-through proxy (floor)"), ""),
      mdRow("proxy", "added latency p50 / p99, unguarded (no tools, passed through)", added("unguarded (no tools)"), "p50 ≤ 1 ms"),
      mdRow("proxy", "added latency p50 / p99, guarded, routed over a 2-backend fleet", added("guarded, routed over a 2-backend fleet"), "p50 ≤ 1 ms"),
      mdRow("proxy", "added latency p50 / p99, structured output (json_schema checked)", added("structured output (json_schema checked)"), "p50 ≤ 1 ms"),
      mdRow("proxy", "time inside the proxy (request time minus backend wait, `/forge/stats`), p50 / p99", `${fig(inside.value)} / ${fig(inside.extra?.p99 ?? NaN)} ms`, ""),
      ...manyToolsReadme(rows),
      mdRow(
        "proxy",
        `${CONCURRENCY} concurrent streaming clients for ${LOAD_SECONDS} s, instant loopback backend`,
        `${fig(load.value)} req/s, ${load.extra?.errors} errors, peak RSS ${fig(rss.value)} MiB`,
        "0 errors",
      ),
      ...streamingReadme(rows),
      ...scaleReadme(rows),
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
