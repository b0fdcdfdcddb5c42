/**
 * Large tool sets in the proxy bench (issue 46): a request offering 1,000 or 5,000 tools, each
 * with a schema of its own, the first time the proxy sees them and again; the instant backend
 * answers with a call to one of them (get_weather). For each: the added latency against the same
 * bodies sent straight to the backend, beside what the bare hop (pass-through-proxy.ts) adds to
 * them; the event-loop delay while the proxy serves them (perf_hooks.monitorEventLoopDelay: how
 * long /health or any other request would wait behind one of them); and the schema work each
 * request did (jsonSchemaWork: schemas checked against the meta-schema, schemas compiled).
 */
import { randomUUID } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Agent, request } from "undici";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { jsonSchemaWork } from "../../src/core/tool.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { percentile } from "../../src/proxy/proxy-stats.js";
import { fig, mdRow, row, type BenchRow } from "./harness.js";

interface ToolSetCase {
  label: string;
  tools: number;
  /** New tools in every request (a new property name per schema), or one body sent again and again. */
  fresh: boolean;
  requests: number;
  warmup: number;
}

const CASES: readonly ToolSetCase[] = [
  { label: "1,000 tools never seen before", tools: 1_000, fresh: true, requests: 20, warmup: 2 },
  { label: "1,000 tools, repeated", tools: 1_000, fresh: false, requests: 100, warmup: 5 },
  { label: "5,000 tools never seen before", tools: 5_000, fresh: true, requests: 8, warmup: 1 },
  { label: "5,000 tools, repeated", tools: 5_000, fresh: false, requests: 30, warmup: 3 },
];
const MESSAGES = [{ role: "user", content: "What is the weather in Lisbon?" }];
/** The tools estimate to more tokens than a real window; this proxy's backend says they fit. */
const ROOMY_WINDOW = 10_000_000;

/** `count` tools: get_weather (what the backend calls) and others, every schema distinct and marked with `tag`. */
function toolSetBody(count: number, tag: string): string {
  const weather = {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", description: tag, properties: { city: { type: "string" }, unit: { type: "string", enum: ["C", "F"] } }, required: ["city"] },
    },
  };
  const others = Array.from({ length: count - 1 }, (_, i) => ({
    type: "function",
    function: { name: `tool_${i}`, description: `Tool ${i}`, parameters: { type: "object", properties: { [`${tag}_${i}`]: { type: "string" } }, required: [`${tag}_${i}`] } },
  }));
  return JSON.stringify({ model: "bench", messages: MESSAGES, tools: [weather, ...others] });
}

async function post(dispatcher: Agent, url: string, body: string): Promise<void> {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher });
  const text = await res.body.text();
  if (res.statusCode !== 200 || !text.includes("get_weather")) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
}

interface Series {
  ms: number[];
  delayP99: number;
  delayMax: number;
}

/** Each body once, in order, timed; the event loop's delay meanwhile. */
async function series(dispatcher: Agent, url: string, bodies: readonly string[]): Promise<Series> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const ms: number[] = [];
  delay.enable();
  for (const body of bodies) {
    const t = performance.now();
    await post(dispatcher, url, body);
    ms.push(performance.now() - t);
  }
  delay.disable();
  return { ms, delayP99: delay.percentile(99) / 1e6, delayMax: delay.max / 1e6 };
}

/** The bodies a case sends (after its warm-up): new tools in each, or one body throughout. */
function bodiesOf(c: ToolSetCase, count: number): string[] {
  if (!c.fresh) return Array(count).fill(toolSetBody(c.tools, `same_${c.tools}`)) as string[];
  return Array.from({ length: count }, () => toolSetBody(c.tools, `t${randomUUID().replaceAll("-", "").slice(0, 12)}`));
}

/**
 * @example
 * rows.push(...(await manyToolsRows(dispatcher, { backend: backend.url, floor: floor.url })));
 */
export async function manyToolsRows(dispatcher: Agent, urls: { backend: string; floor: string }): Promise<BenchRow[]> {
  const proxy = createProxy({ client: new OpenAICompatClient({ model: "bench", baseUrl: `${urls.backend}/v1` }), contextLength: ROOMY_WINDOW });
  const { url } = await proxy.listen({ port: 0 });
  const chat = (base: string) => `${base}/v1/chat/completions`;
  const rows: BenchRow[] = [];
  try {
    for (const c of CASES) {
      const warm = bodiesOf(c, c.warmup);
      for (const body of warm) for (const base of [urls.backend, urls.floor, url]) await post(dispatcher, chat(base), body);
      const bodies = bodiesOf(c, c.requests);
      const direct = await series(dispatcher, chat(urls.backend), bodies);
      const floor = await series(dispatcher, chat(urls.floor), bodies);
      const before = jsonSchemaWork();
      const via = await series(dispatcher, chat(url), bodies);
      const after = jsonSchemaWork();
      const p50 = (s: Series) => percentile(s.ms, 50)!;
      const perRequest = (n: number) => n / c.requests;
      rows.push(
        {
          suite: "proxy",
          case: `${c.label}: added latency p50`,
          value: p50(via) - p50(direct),
          unit: "ms",
          note: [
            `direct ${p50(direct).toFixed(1)} ms, via proxy ${p50(via).toFixed(1)} ms, bare hop adds ${(p50(floor) - p50(direct)).toFixed(2)} ms`,
            `${c.requests} requests of ${Math.round(bodies[0]!.length / 1024)} KB`,
            `per request ${perRequest(after.checked - before.checked)} schemas checked, ${perRequest(after.compiled - before.compiled)} compiled`,
          ].join("; "),
          extra: { floor: p50(floor) - p50(direct), kb: bodies[0]!.length / 1024, checked: perRequest(after.checked - before.checked), compiled: perRequest(after.compiled - before.compiled) },
        },
        {
          suite: "proxy",
          case: `${c.label}: event-loop delay p99`,
          value: via.delayP99,
          unit: "ms",
          note: `max ${via.delayMax.toFixed(1)} ms while the proxy served them; direct p99 ${direct.delayP99.toFixed(1)} / max ${direct.delayMax.toFixed(1)} ms, bare hop p99 ${floor.delayP99.toFixed(1)} / max ${floor.delayMax.toFixed(1)} ms`,
          extra: { max: via.delayMax, floorP99: floor.delayP99, floorMax: floor.delayMax },
        },
      );
    }
  } finally {
    await proxy.close();
  }
  return rows;
}

/** The README rows of the large tool sets. */
export function manyToolsReadme(rows: BenchRow[]): string[] {
  return CASES.map((c) => {
    const added = row(rows, `${c.label}: added latency p50`);
    const delay = row(rows, `${c.label}: event-loop delay p99`);
    const x = added.extra ?? {};
    const d = delay.extra ?? {};
    return mdRow(
      "proxy",
      `${c.label} (${fig(x.kb ?? NaN)} KB body, the backend calls one): added latency p50 (bare hop); event-loop delay p99 / max (bare hop); schemas checked / compiled per request`,
      `${fig(added.value)} ms (${fig(x.floor ?? NaN)} ms); ${fig(delay.value)} / ${fig(d.max ?? NaN)} ms (${fig(d.floorP99 ?? NaN)} / ${fig(d.floorMax ?? NaN)} ms); ${fig(x.checked ?? NaN)} / ${fig(x.compiled ?? NaN)}`,
      "delay max ≤ 500 ms",
    );
  });
}
