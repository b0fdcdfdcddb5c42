/**
 * The proxy at scale (`npm run bench -- proxy-scale`, and at the end of the proxy suite): the
 * CLI proxy (`forge-ts proxy --backend llamaserver`), the loopback backend (scale-backend.ts) and
 * the minimal pass-through (pass-through-proxy.ts, the floor) each in a process of its own, so
 * a hop's CPU (/proc/<pid>/stat) and peak RSS (VmHWM) are its own, and every row is measured
 * through the proxy and through the pass-through in the same run, the same way.
 *
 * 1. The captured first requests of real agents (test/fixtures/agents), sent as recorded,
 *    sequentially after a warm-up, the backend calling a tool the request offers: added latency
 *    p50 against the same request straight to the backend. Chat Completions bodies go to the
 *    backend as they are; an Anthropic Messages or Responses body is one the backend cannot
 *    read, so its direct twin is the Chat Completions body the proxy sent the backend for it
 *    (captured), and the floor pipes that twin. Target p50 ≤ 2 ms.
 * 2. One request with 1,000 (then 5,000) tools never seen before: added latency, and how long
 *    a GET /health polled every 10 ms meanwhile waits (max, p99).
 * 3. Long answers in 4-character deltas with tools offered: 200k and 800k characters of prose
 *    with code fences and JSON snippets, and a bare-JSON write_file call of 200k characters sent
 *    as text (the proxy must turn it into the call): the hop's CPU seconds, /health wait max.
 * 4. 1,000 concurrent streams of 100 deltas at 20/s: errors, time to first token p50/p99, CPU,
 *    peak RSS. Targets: 0 errors, TTFT p99 and peak RSS ≤ 2× the floor's.
 * 5. 200 concurrent streams of 300 deltas at 100/s: CPU µs per delta (target ≤ 1.5× the
 *    floor's), peak RSS.
 * 6. The proxy's event-loop delay under 4 and 5, from its own /metrics (prom-client's
 *    monitorEventLoopDelay, reset by each scrape), beside the /health wait p99 of both hops.
 *    Target p99 ≤ 50 ms.
 *
 * FORGE_BENCH_PROXY_SCALE=quick halves the counts and sizes (not the deltas per stream or their
 * pace); =off leaves these rows out of the proxy suite. FORGE_BENCH_PROXY_SCALE_ROWS picks
 * groups (comma-separated: agents, slow, fast, tools, long; default all), so a CPU profile
 * (FORGE_BENCH_PROXY_CPU_PROF=<dir>: the proxy under `node --cpu-prof`, written when it exits)
 * can be of one workload.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { percentile } from "../../src/proxy/proxy-stats.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";
import { nodeArgs } from "./node-args.js";
import { DIRECTIVE, directiveDeltas, type Directive } from "./scale-backend.js";

const SUITE = "proxy-scale";
const MODE = process.env.FORGE_BENCH_PROXY_SCALE ?? "";
/** The proxy suite calls this module unless told not to. */
export const SCALE_IN_PROXY_SUITE = MODE !== "off";
const QUICK = MODE === "quick";
const half = (n: number) => (QUICK ? Math.max(1, Math.round(n / 2)) : n);

const SIZE = {
  fixtureWarmup: half(50),
  fixtureRuns: half(300),
  toolSets: [half(1_000), half(5_000)],
  toolRequests: QUICK ? 2 : 3,
  prose: [half(200_000), half(800_000)],
  writeFile: half(200_000),
  slow: { streams: half(1_000), deltas: 100, perSecond: 20 },
  fast: { streams: half(200), deltas: 300, perSecond: 100 },
};
const GROUPS = ["agents", "slow", "fast", "tools", "long"] as const;
const picked = (process.env.FORGE_BENCH_PROXY_SCALE_ROWS ?? GROUPS.join(",")).split(",").map((g) => g.trim());
const unknownGroups = picked.filter((g) => !(GROUPS as readonly string[]).includes(g));
if (unknownGroups.length > 0) throw new Error(`FORGE_BENCH_PROXY_SCALE_ROWS: unknown ${unknownGroups.join(", ")}; use ${GROUPS.join(", ")}`);
const wants = (group: (typeof GROUPS)[number]) => picked.includes(group);
const DELTA_CHARS = 4;
const HEALTH_EVERY_MS = 10;
/** /proc/<pid>/stat counts CPU in clock ticks: 100 a second on Linux (getconf CLK_TCK). */
const CLK_TCK = 100;
/** Large enough that no bench prompt (5,000 tools are ~330k estimated tokens) nears it, so the proxy never asks for an exact count. */
const N_CTX = 1_048_576;
/** 1,000 streams plus the pollers are 1,002 sockets, close to the default 1,024: headroom, not a change of behaviour. */
const MAX_CONNECTIONS = 4_096;

const here = fileURLToPath(import.meta.url);
const dir = path.dirname(here);
const ext = path.extname(here);
const ROOT = path.resolve(dir, "../..");
const FIXTURES = path.join(ROOT, "test/fixtures/agents");

const TOOLS = [
  { type: "function", function: { name: "get_weather", description: "Current weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
  { type: "function", function: { name: "search", description: "Search the web", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } } },
  {
    type: "function",
    function: { name: "write_file", description: "Write a file", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] } },
  },
];

// ---------------------------------------------------------------- processes

interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Spawns `args` and resolves once stdout matched `ready` (its first group is the URL). */
async function start(name: string, args: string[], ready: RegExp, urlLine: RegExp): Promise<Proc> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  // A bench that dies (an unhandled rejection) must not leave a proxy or backend running.
  const orphaned = () => child.kill("SIGKILL");
  process.once("exit", orphaned);
  child.once("exit", () => process.off("exit", orphaned));
  let out = "";
  // Kept short: a chatty child must never block on a full pipe, and only its start-up and last words matter.
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-32_768));
  child.stderr!.on("data", keep);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s: ${out}`)), 60_000);
    child.stdout!.on("data", (d: Buffer) => {
      keep(d);
      const found = urlLine.exec(out);
      if (found && ready.test(out)) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`${name} exited ${code}: ${out}`))));
  });
  return {
    name,
    child,
    pid: child.pid!,
    url,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      // The CLI's clean exit writes a --cpu-prof profile: give it time, then insist.
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A process and its descendants: a proxy run with --workers serves from children its pid does not count. */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${out[i]}/task`)) {
        const children = readFileSync(`/proc/${out[i]}/task/${task}/children`, "utf8").trim();
        if (children) out.push(...children.split(" ").map(Number));
      }
    } catch {
      // Gone meanwhile: nothing of it to count.
    }
  }
  return out;
}

/** utime + stime of a process tree, in seconds. */
function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const one of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${one}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Exited between the listing and the read.
    }
  }
  return ticks / CLK_TCK;
}

/** Peak RSS (VmHWM) of a process tree, summed, in MiB. */
function peakRssMiB(pid: number): number {
  let kb = 0;
  for (const one of processTree(pid)) {
    try {
      kb += Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${one}/status`, "utf8"))?.[1] ?? NaN);
    } catch {
      // Exited between the listing and the read.
    }
  }
  return kb / 1024;
}

/** Resets a process tree's peak RSS to its RSS now (clear_refs 5); false where the kernel refuses. */
function resetPeakRss(pid: number): boolean {
  try {
    for (const one of processTree(pid)) writeFileSync(`/proc/${one}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- client side

const JSON_HEADERS = { "content-type": "application/json" };

async function postText(agent: Agent, url: string, body: string, headers: Record<string, string> = JSON_HEADERS): Promise<string> {
  const res = await request(url, { method: "POST", body, headers, dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
  return text;
}

async function getText(agent: Agent, url: string): Promise<string> {
  const res = await request(url, { dispatcher: agent });
  return res.body.text();
}

interface Streamed {
  /** Milliseconds from sending to the first content delta (NaN: none came). */
  ttft: number;
  content: string;
  calls: { name: string; arguments: string }[];
  done: boolean;
  attempts: number | undefined;
}

/** A Chat Completions SSE stream read to its end: the content, the calls, when the first token came. */
async function readStream(agent: Agent, url: string, body: string, answer: { began: boolean } = { began: false }): Promise<Streamed> {
  const started = performance.now();
  const res = await request(url, { method: "POST", body, headers: JSON_HEADERS, dispatcher: agent });
  answer.began = true;
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  res.body.setEncoding("utf8");
  const out: Streamed = { ttft: NaN, content: "", calls: [], done: false, attempts: undefined };
  const content: string[] = [];
  const names: string[] = [];
  const args: string[][] = [];
  let buffer = "";
  for await (const piece of res.body as AsyncIterable<string>) {
    buffer += piece;
    let from = 0;
    let end: number;
    while ((end = buffer.indexOf("\n\n", from)) >= 0) {
      const event = buffer.slice(from, end);
      from = end + 2;
      if (!event.startsWith("data: ")) continue;
      if (event === "data: [DONE]") {
        out.done = true;
        continue;
      }
      const data = JSON.parse(event.slice(6)) as {
        choices?: { delta?: { content?: string | null; tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] } }[];
        forge?: { attempts?: number };
      };
      if (data.forge?.attempts !== undefined) out.attempts = data.forge.attempts;
      const delta = data.choices?.[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        if (Number.isNaN(out.ttft)) out.ttft = performance.now() - started;
        content.push(delta.content);
      }
      for (const call of delta.tool_calls ?? []) {
        if (call.function?.name) names[call.index] = call.function.name;
        (args[call.index] ??= []).push(call.function?.arguments ?? "");
      }
    }
    buffer = buffer.slice(from);
  }
  out.content = content.join("");
  out.calls = names.map((name, i) => ({ name, arguments: (args[i] ?? []).join("") }));
  return out;
}

const directiveBody = (d: Directive, tools: unknown[] = TOOLS) =>
  JSON.stringify({ model: "bench", stream: true, tools, messages: [{ role: "user", content: `${DIRECTIVE}${JSON.stringify(d)}` }] });

/** GET /health every HEALTH_EVERY_MS until stopped: how long each waited. */
function pollHealth(base: string): { stop(): Promise<{ waits: number[]; failed: number; max: number; p99: number }> } {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 120_000 });
  const waits: number[] = [];
  let failed = 0;
  let firstFailure = "";
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      try {
        await getText(agent, `${base}/health`);
      } catch (error) {
        // Counted, not thrown: a probe that fails is a finding of the row, not the end of the run.
        failed++;
        firstFailure ||= (error as Error).message;
      }
      const took = performance.now() - t;
      waits.push(took);
      if (took < HEALTH_EVERY_MS) await sleep(HEALTH_EVERY_MS - took);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await agent.close();
      if (failed > 0) process.stderr.write(`  ${SUITE}: ${failed} of ${waits.length} GET ${base}/health failed (first: ${firstFailure})\n`);
      return { waits, failed, max: waits.length ? Math.max(...waits) : NaN, p99: percentile(waits, 99) ?? NaN };
    },
  };
}

/** The proxy's own event-loop delay since the previous scrape (prom-client resets it on each). */
async function eventLoopLag(agent: Agent, base: string): Promise<{ p99: number; max: number }> {
  const text = await getText(agent, `${base}/metrics`);
  const read = (name: string) => Number(new RegExp(`^forge_nodejs_eventloop_lag_${name}_seconds(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN) * 1000;
  return { p99: read("p99"), max: read("max") };
}

const p = (values: readonly number[], q: number) => percentile(values, q) ?? NaN;
const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 1)} ms`;

// ---------------------------------------------------------------- 1. agents' first requests

interface Fixture {
  file: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const API_OF: Record<string, string> = { "/v1/messages": "Anthropic Messages", "/v1/responses": "OpenAI Responses", "/v1/chat/completions": "Chat Completions" };

function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(path.join(FIXTURES, file), "utf8")) as Omit<Fixture, "file">) }));
}

async function fixtureRows(agent: Agent, urls: Urls): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const f of loadFixtures()) {
    const route = f.path.split("?")[0]!;
    const api = API_OF[route] ?? route;
    const body = JSON.stringify(f.body);
    const headers = { ...f.headers, "content-type": "application/json" };
    const viaProxy = () => postText(agent, `${urls.proxy}${f.path}`, body, headers);
    const first = await viaProxy();
    if (!first.includes('"attempts":1,')) throw new Error(`${f.file}: not answered on the first attempt: ${first.slice(-300)}`);
    // What the backend got for it: the direct twin of a body in an API the backend does not speak.
    const twin = route === "/v1/chat/completions" ? body : (JSON.parse(await getText(agent, `${urls.backend}/bench/stats`)) as { last: string }).last;
    const chat = "/v1/chat/completions";
    const series = {
      direct: () => postText(agent, `${urls.backend}${chat}`, twin, headers),
      floor: () => postText(agent, `${urls.floor}${chat}`, twin, headers),
      proxy: viaProxy,
    };
    for (let i = 0; i < SIZE.fixtureWarmup; i++) for (const send of Object.values(series)) await send();
    const times = { direct: [] as number[], floor: [] as number[], proxy: [] as number[] };
    // Interleaved: drift on a shared machine hits the three series alike.
    for (let i = 0; i < SIZE.fixtureRuns; i++) {
      for (const [name, send] of Object.entries(series) as [keyof typeof times, () => Promise<string>][]) {
        const t = performance.now();
        const text = await send();
        times[name].push(performance.now() - t);
        if (name === "proxy" && !text.includes('"attempts":1,')) throw new Error(`${f.file}: a retry during the run: ${text.slice(-300)}`);
      }
    }
    const tools = Array.isArray(f.body.tools) ? f.body.tools.length : 0;
    const added = p(times.proxy, 50) - p(times.direct, 50);
    const floor = p(times.floor, 50) - p(times.direct, 50);
    rows.push({
      suite: SUITE,
      case: `first request of ${f.file.replace(/\.json$/, "")} (${api}): added latency p50`,
      value: added,
      unit: "ms",
      note: [
        `direct ${ms(p(times.direct, 50))}, via pass-through ${ms(p(times.floor, 50))} (adds ${floor.toFixed(2)}), via proxy ${ms(p(times.proxy, 50))}`,
        `p99 added ${(p(times.proxy, 99) - p(times.direct, 99)).toFixed(2)} ms`,
        `${Math.round(body.length / 1024)} KB, ${tools} tools, streamed, the backend calls one`,
        route === chat ? "direct and floor: the same body" : `direct and floor: the ${Math.round(twin.length / 1024)} KB Chat Completions body the proxy sent the backend`,
        `${SIZE.fixtureRuns} sequential runs after ${SIZE.fixtureWarmup}`,
      ].join("; "),
      extra: { floor, p99: p(times.proxy, 99) - p(times.direct, 99), kb: body.length / 1024, tools },
    });
  }
  return rows;
}

// ---------------------------------------------------------------- 2. large new tool sets

/** `count` tools, names and schemas all new (marked with `tag`); get_weather first, which the backend calls. */
function freshTools(count: number): string {
  const tag = `t${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const tools = [
    { type: "function", function: { name: "get_weather", description: `Weather ${tag}`, parameters: { type: "object", description: tag, properties: { city: { type: "string" } }, required: ["city"] } } },
    ...Array.from({ length: count - 1 }, (_, i) => ({
      type: "function",
      function: {
        name: `${tag}_tool_${i}`,
        description: `Tool ${i} of set ${tag}`,
        parameters: { type: "object", properties: { [`${tag}_${i}`]: { type: "string" }, [`n${i}`]: { type: "integer", minimum: i } }, required: [`${tag}_${i}`] },
      },
    })),
  ];
  return JSON.stringify({ model: "bench", messages: [{ role: "user", content: "What is the weather in Lisbon?" }], tools });
}

/** One request, /health polled on the same hop meanwhile (not on the backend, which has none). */
async function timedWithHealth(agent: Agent, base: string, body: string, poll: boolean): Promise<{ ms: number; waits: number[] }> {
  const health = poll ? pollHealth(base) : undefined;
  const t = performance.now();
  const text = await postText(agent, `${base}/v1/chat/completions`, body);
  const took = performance.now() - t;
  const waits = (await health?.stop())?.waits ?? [];
  if (!text.includes("get_weather")) throw new Error(`no get_weather call: ${text.slice(0, 300)}`);
  return { ms: took, waits };
}

async function toolSetRows(agent: Agent, urls: Urls): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const count of SIZE.toolSets) {
    const warm = freshTools(count);
    for (const base of [urls.backend, urls.floor, urls.proxy]) await postText(agent, `${base}/v1/chat/completions`, warm);
    const added: number[] = [];
    const floorAdded: number[] = [];
    const waits = { proxy: [] as number[], floor: [] as number[] };
    let kb = 0;
    for (let r = 0; r < SIZE.toolRequests; r++) {
      const body = freshTools(count);
      kb = body.length / 1024;
      const direct = (await timedWithHealth(agent, urls.backend, body, false)).ms;
      const floor = await timedWithHealth(agent, urls.floor, body, true);
      const proxy = await timedWithHealth(agent, urls.proxy, body, true);
      added.push(proxy.ms - direct);
      floorAdded.push(floor.ms - direct);
      waits.proxy.push(...proxy.waits);
      waits.floor.push(...floor.waits);
    }
    const label = `one request with ${count.toLocaleString("en")} tools never seen before`;
    const max = (w: number[]) => (w.length ? Math.max(...w) : NaN);
    rows.push(
      {
        suite: SUITE,
        case: `${label}: added latency`,
        value: p(added, 50),
        unit: "ms",
        note: `median of ${SIZE.toolRequests} requests of ${Math.round(kb)} KB, each set new (${added.map((a) => a.toFixed(1)).join(", ")} ms); pass-through adds ${p(floorAdded, 50).toFixed(2)} ms`,
        extra: { floor: p(floorAdded, 50), kb },
      },
      {
        suite: SUITE,
        case: `${label}: /health wait max`,
        value: max(waits.proxy),
        unit: "ms",
        note: `p99 ${ms(p(waits.proxy, 99))} over ${waits.proxy.length} polls every ${HEALTH_EVERY_MS} ms during the requests; pass-through max ${ms(max(waits.floor))}, p99 ${ms(p(waits.floor, 99))}`,
        extra: { p99: p(waits.proxy, 99), floorMax: max(waits.floor), floorP99: p(waits.floor, 99), polls: waits.proxy.length },
      },
    );
  }
  return rows;
}

// ---------------------------------------------------------------- 3. long streamed answers

interface LongCase {
  label: string;
  directive: Directive;
  /** Throws when what came through a hop is not the answer (the proxy turns write_file into a call). */
  check(got: Streamed, hop: "proxy" | "floor"): void;
}

function longCases(): LongCase[] {
  const prose = (size: number): LongCase => {
    const directive: Directive = { answer: "prose", size, delta: DELTA_CHARS };
    const expected = directiveDeltas(directive).join("");
    return {
      label: `${size.toLocaleString("en")} characters of prose with code fences and JSON snippets`,
      directive,
      check(got) {
        if (got.content !== expected || got.calls.length > 0 || !got.done) throw new Error(`prose ${size}: ${got.content.length} of ${expected.length} characters came through, ${got.calls.length} calls`);
      },
    };
  };
  const directive: Directive = { answer: "write_file", size: SIZE.writeFile, delta: DELTA_CHARS };
  const text = directiveDeltas(directive).join("");
  const content = (JSON.parse(text) as { arguments: { content: string } }).arguments.content;
  return [
    ...SIZE.prose.map(prose),
    {
      label: `a bare-JSON write_file call of ${SIZE.writeFile.toLocaleString("en")} characters (escaped code) as text`,
      directive,
      check(got, hop) {
        if (hop === "floor") {
          if (got.content !== text) throw new Error(`write_file through the pass-through: ${got.content.length} of ${text.length} characters`);
          return;
        }
        const call = got.calls[0];
        const args = call ? (JSON.parse(call.arguments) as { content?: string }) : undefined;
        if (call?.name !== "write_file" || args?.content !== content || got.content !== "") throw new Error(`write_file: the proxy did not return the call (${got.calls.length} calls, ${got.content.length} characters of text)`);
      },
    },
  ];
}

async function longStreamRows(agent: Agent, procs: Procs): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  // JIT warm-up of both hops' streaming paths, prose and call alike.
  for (const hop of [procs.floor, procs.proxy]) {
    for (const d of [
      { answer: "prose", size: 20_000, delta: DELTA_CHARS },
      { answer: "write_file", size: 20_000, delta: DELTA_CHARS },
    ] as Directive[])
      await readStream(agent, `${hop.url}/v1/chat/completions`, directiveBody(d));
  }
  for (const c of longCases()) {
    const measured: Record<"proxy" | "floor", { cpu: number; wall: number; healthMax: number }> = {} as never;
    for (const [hop, proc] of [
      ["floor", procs.floor],
      ["proxy", procs.proxy],
    ] as const) {
      const health = pollHealth(proc.url);
      const cpu = cpuSeconds(proc.pid);
      const t = performance.now();
      const got = await readStream(agent, `${proc.url}/v1/chat/completions`, directiveBody(c.directive));
      const wall = performance.now() - t;
      const used = cpuSeconds(proc.pid) - cpu;
      const { max } = await health.stop();
      c.check(got, hop);
      if (hop === "proxy" && got.attempts !== 1) throw new Error(`${c.label}: ${got.attempts} attempts`);
      measured[hop] = { cpu: used, wall, healthMax: max };
    }
    const { proxy, floor } = measured;
    const deltas = Math.ceil(c.directive.size / DELTA_CHARS);
    rows.push({
      suite: SUITE,
      case: `${c.label}, ${DELTA_CHARS}-character deltas: proxy CPU`,
      value: proxy.cpu,
      unit: "s",
      note: `pass-through ${floor.cpu.toFixed(2)} s; ${deltas.toLocaleString("en")} deltas, tools offered, instant backend; wall ${(proxy.wall / 1000).toFixed(2)} s (pass-through ${(floor.wall / 1000).toFixed(2)} s); /health wait max ${ms(proxy.healthMax)} (pass-through ${ms(floor.healthMax)})`,
      extra: { floor: floor.cpu, healthMax: proxy.healthMax, floorHealthMax: floor.healthMax, wall: proxy.wall, floorWall: floor.wall },
    });
  }
  return rows;
}

// ---------------------------------------------------------------- 4-6. many concurrent streams

interface LoadShape {
  streams: number;
  deltas: number;
  perSecond: number;
}

interface LoadResult {
  errors: number;
  /** Errors before the response's status line came. */
  beforeAnswer: number;
  firstError: string;
  ttft: number[];
  cpu: number;
  peakRssMiB: number;
  rssReset: boolean;
  health: { max: number; p99: number };
  lag?: { p99: number; max: number };
  wall: number;
}

const loadName = (s: LoadShape) => `${s.streams.toLocaleString("en")} streams × ${s.deltas} deltas at ${s.perSecond}/s`;

/** `shape.streams` paced streams at once through one hop: errors, TTFT, the hop's CPU and peak RSS. */
async function load(agent: Agent, proc: Proc, shape: LoadShape, withLag: boolean): Promise<LoadResult> {
  const url = `${proc.url}/v1/chat/completions`;
  const d: Directive = { answer: "words", size: shape.deltas, perSecond: shape.perSecond };
  const expected = directiveDeltas(d).join("");
  const body = directiveBody(d, TOOLS.slice(0, 1));
  // Every connection opened, on both legs, before the measured burst: TTFT and CPU are the hop's
  // streams, not TCP's set-up (which, for a thousand at once, doubled the CPU of either hop).
  const warm = directiveBody({ answer: "words", size: 5 }, TOOLS.slice(0, 1));
  await Promise.all(Array.from({ length: shape.streams }, () => readStream(agent, url, warm)));
  const metrics = new Agent({ connections: 1 });
  if (withLag) await eventLoopLag(metrics, proc.url);
  const rssReset = resetPeakRss(proc.pid);
  const cpu = cpuSeconds(proc.pid);
  const health = pollHealth(proc.url);
  const started = performance.now();
  const result: LoadResult = { errors: 0, beforeAnswer: 0, firstError: "", ttft: [], cpu: 0, peakRssMiB: 0, rssReset, health: { max: 0, p99: 0 }, wall: 0 };
  await Promise.all(
    Array.from({ length: shape.streams }, async () => {
      const answer = { began: false };
      try {
        const got = await readStream(agent, url, body, answer);
        if (got.content !== expected || !got.done) throw new Error(`${got.content.length} of ${expected.length} characters${got.done ? "" : ", no [DONE]"}`);
        result.ttft.push(got.ttft);
      } catch (error) {
        result.errors++;
        // A reset before any answer is most often a reused keep-alive socket the hop closed meanwhile.
        if (!answer.began) result.beforeAnswer++;
        result.firstError ||= (error as Error).message;
      }
    }),
  );
  result.wall = performance.now() - started;
  result.cpu = cpuSeconds(proc.pid) - cpu;
  result.peakRssMiB = peakRssMiB(proc.pid);
  const h = await health.stop();
  result.health = { max: h.max, p99: h.p99 };
  if (withLag) result.lag = await eventLoopLag(metrics, proc.url);
  await metrics.close();
  return result;
}

function loadRows(shape: LoadShape, proxy: LoadResult, floor: LoadResult): BenchRow[] {
  const name = loadName(shape);
  const deltas = shape.streams * shape.deltas;
  const perDelta = (r: LoadResult) => (r.cpu * 1e6) / deltas;
  const rss = proxy.rssReset ? "peak RSS (VmHWM) since the burst began" : "peak RSS (VmHWM) since the process started";
  return [
    {
      suite: SUITE,
      case: `${name}: errors`,
      value: proxy.errors,
      unit: "errors",
      note: `pass-through ${floor.errors}; before any answer: ${proxy.beforeAnswer} (pass-through ${floor.beforeAnswer})${proxy.firstError ? `; first: ${proxy.firstError}` : ""}${floor.firstError ? `; pass-through's first: ${floor.firstError}` : ""}; tools offered, every stream's text checked`,
      extra: { floor: floor.errors },
    },
    {
      suite: SUITE,
      case: `${name}: time to first token p99`,
      value: p(proxy.ttft, 99),
      unit: "ms",
      note: `p50 ${ms(p(proxy.ttft, 50))}; pass-through p50 ${ms(p(floor.ttft, 50))}, p99 ${ms(p(floor.ttft, 99))}; all started at once, connections opened beforehand`,
      extra: { p50: p(proxy.ttft, 50), floor: p(floor.ttft, 99), floorP50: p(floor.ttft, 50) },
    },
    {
      suite: SUITE,
      case: `${name}: CPU per delta`,
      value: perDelta(proxy),
      unit: "µs",
      note: `proxy ${proxy.cpu.toFixed(2)} s CPU, pass-through ${floor.cpu.toFixed(2)} s (${fig(perDelta(floor))} µs a delta) for ${deltas.toLocaleString("en")} deltas in ${(proxy.wall / 1000).toFixed(1)} s (pass-through ${(floor.wall / 1000).toFixed(1)} s)`,
      extra: { floor: perDelta(floor), cpu: proxy.cpu, floorCpu: floor.cpu },
    },
    { suite: SUITE, case: `${name}: peak RSS`, value: proxy.peakRssMiB, unit: "MiB", note: `pass-through ${fig(floor.peakRssMiB)} MiB; ${rss}`, extra: { floor: floor.peakRssMiB } },
    // The ratios the targets state, as rows of their own: --check prints them in their own unit.
    ...(
      [
        ["time to first token p99", p(proxy.ttft, 99), p(floor.ttft, 99)],
        ["CPU per delta", perDelta(proxy), perDelta(floor)],
        ["peak RSS", proxy.peakRssMiB, floor.peakRssMiB],
      ] as const
    ).map(([what, mine, theirs]) => ({ suite: SUITE, case: `${name}: ${what}, proxy / pass-through`, value: mine / theirs, unit: "×" })),
    {
      suite: SUITE,
      case: `${name}: event-loop delay p99 (/metrics)`,
      value: proxy.lag?.p99 ?? NaN,
      unit: "ms",
      note: `max ${ms(proxy.lag?.max ?? NaN)} (prom-client, 10 ms sampling: an idle loop reads about 10 ms); /health wait p99 ${ms(proxy.health.p99)}, max ${ms(proxy.health.max)}; pass-through's p99 ${ms(floor.health.p99)}, max ${ms(floor.health.max)}`,
      extra: { max: proxy.lag?.max ?? NaN, healthP99: proxy.health.p99, healthMax: proxy.health.max, floorHealthP99: floor.health.p99, floorHealthMax: floor.health.max },
    },
  ];
}

// ---------------------------------------------------------------- the suite

interface Urls {
  backend: string;
  floor: string;
  proxy: string;
}

interface Procs {
  backend: Proc;
  floor: Proc;
  proxy: Proc;
}

/** A module beside this one, as this one runs (TypeScript under tsx, or its built JavaScript twin). */
const sibling = (name: string) => path.join(dir, `${name}${ext}`);

async function startAll(): Promise<Procs> {
  const backend = await start("backend", nodeArgs(sibling("scale-backend"), String(N_CTX)), /listening on/, /listening on (\S+)/);
  const cli = path.resolve(ROOT, `src/cli/main${ext}`);
  const prof = process.env.FORGE_BENCH_PROXY_CPU_PROF;
  const proxyArgs = [
    ...(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
    ...nodeArgs(cli, "proxy", "--backend", "llamaserver", "--base-url", `${backend.url}/v1`, "--model", "bench", "--mode", "native", "--port", "0", "--max-connections", String(MAX_CONNECTIONS)),
  ];
  const [proxy, floor] = await Promise.all([
    // Ready once it printed the window it learnt from /props.
    start("proxy", proxyArgs, /window: \d+ tokens/, /listening on (\S+)/),
    start("pass-through", nodeArgs(sibling("pass-through-proxy"), backend.url), /listening on/, /listening on (\S+)/),
  ]);
  return { backend, floor, proxy };
}

/** Every row of the proxy at scale; the processes are stopped whatever happens. */
export async function scaleRows(): Promise<BenchRow[]> {
  const procs = await startAll();
  const urls: Urls = { backend: procs.backend.url, floor: procs.floor.url, proxy: procs.proxy.url };
  const streams = Math.max(SIZE.slow.streams, SIZE.fast.streams);
  const agent = new Agent({ connections: streams + 16, keepAliveTimeout: 120_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const rows: BenchRow[] = [];
  const began = performance.now();
  const phase = (name: string) => process.stderr.write(`  ${SUITE}: ${name} (at ${((performance.now() - began) / 1000).toFixed(0)} s)\n`);
  try {
    if (wants("agents")) {
      phase("agents' first requests");
      rows.push(...(await fixtureRows(agent, urls)));
    }
    // The concurrent loads before the long answers and large tool sets: peak RSS is not theirs.
    for (const shape of [...(wants("slow") ? [SIZE.slow] : []), ...(wants("fast") ? [SIZE.fast] : [])]) {
      phase(loadName(shape));
      const floor = await load(agent, procs.floor, shape, false);
      const proxy = await load(agent, procs.proxy, shape, true);
      rows.push(...loadRows(shape, proxy, floor));
    }
    if (wants("tools")) {
      phase("large new tool sets");
      rows.push(...(await toolSetRows(agent, urls)));
    }
    if (wants("long")) {
      phase("long streamed answers");
      rows.push(...(await longStreamRows(agent, procs)));
    }
    const stats = JSON.parse(await getText(agent, `${urls.backend}/bench/stats`)) as { unexpected: number; unexpectedPaths: string[] };
    if (stats.unexpected > 0) throw new Error(`the backend was asked ${stats.unexpected} requests it does not serve: ${stats.unexpectedPaths.join(", ")}`);
  } catch (error) {
    process.stderr.write(`  ${SUITE}: proxy output: ${procs.proxy.output().slice(-2000)}\n`);
    throw error;
  } finally {
    await agent.close();
    await Promise.all([procs.proxy.stop(), procs.floor.stop()]);
    await procs.backend.stop();
  }
  return rows;
}

/** The README rows (docs/benchmarks.md) of scaleRows' figures. */
export function scaleReadme(rows: readonly BenchRow[]): string[] {
  const own = rows.filter((r) => r.suite === SUITE);
  if (own.length === 0) return [];
  const out: string[] = [];
  for (const r of own.filter((r) => r.case.startsWith("first request of "))) {
    const x = r.extra ?? {};
    out.push(mdRow(SUITE, `${r.case.replace(/: added latency p50$/, "")}, ${fig(x.kb ?? NaN)} KB, ${x.tools} tools: added latency p50 (pass-through)`, `${fig(r.value)} ms (${fig(x.floor ?? NaN)} ms)`, "p50 ≤ 2 ms"));
  }
  const has = (caseName: string) => own.some((r) => r.case === caseName);
  for (const count of SIZE.toolSets) {
    const label = `one request with ${count.toLocaleString("en")} tools never seen before`;
    if (!has(`${label}: added latency`)) continue;
    const added = row(own, `${label}: added latency`);
    const wait = row(own, `${label}: /health wait max`);
    const w = wait.extra ?? {};
    out.push(
      mdRow(
        SUITE,
        `${label} (${fig(added.extra?.kb ?? NaN)} KB): added latency (pass-through); /health wait max / p99 meanwhile (pass-through)`,
        `${fig(added.value)} ms (${fig(added.extra?.floor ?? NaN)} ms); ${fig(wait.value)} / ${fig(w.p99 ?? NaN)} ms (${fig(w.floorMax ?? NaN)} / ${fig(w.floorP99 ?? NaN)} ms)`,
        "",
      ),
    );
  }
  for (const r of own.filter((r) => r.case.endsWith("-character deltas: proxy CPU"))) {
    const x = r.extra ?? {};
    out.push(mdRow(SUITE, `${r.case.replace(/: proxy CPU$/, "")}, tools offered: CPU proxy / pass-through; /health wait max proxy / pass-through`, `${fig(r.value)} / ${fig(x.floor ?? NaN)} s; ${fig(x.healthMax ?? NaN)} / ${fig(x.floorHealthMax ?? NaN)} ms`, ""));
  }
  for (const shape of [SIZE.slow, SIZE.fast]) {
    const name = loadName(shape);
    if (!has(`${name}: errors`)) continue;
    const get = (what: string) => row(own, `${name}: ${what}`);
    const errors = get("errors");
    const ttft = get("time to first token p99");
    const cpu = get("CPU per delta");
    const rss = get("peak RSS");
    const lag = get("event-loop delay p99 (/metrics)");
    const t = ttft.extra ?? {};
    out.push(
      mdRow(
        SUITE,
        `${name}, tools offered: errors; TTFT p50 / p99; CPU per delta; peak RSS — proxy (pass-through)`,
        `${fig(errors.value)} (${fig(errors.extra?.floor ?? NaN)}); ${fig(t.p50 ?? NaN)} / ${fig(ttft.value)} ms (${fig(t.floorP50 ?? NaN)} / ${fig(t.floor ?? NaN)} ms); ${fig(cpu.value)} µs (${fig(cpu.extra?.floor ?? NaN)} µs); ${fig(rss.value)} MiB (${fig(rss.extra?.floor ?? NaN)} MiB)`,
        shape === SIZE.slow ? "0 errors; TTFT p99 ≤ 2× pass-through; peak RSS ≤ 2× pass-through" : "0 errors; CPU per delta ≤ 1.5× pass-through",
      ),
      mdRow(
        SUITE,
        `${name}: the proxy's event-loop delay p99 / max (its /metrics); /health wait p99 proxy (pass-through)`,
        `${fig(lag.value)} / ${fig(lag.extra?.max ?? NaN)} ms; ${fig(lag.extra?.healthP99 ?? NaN)} ms (${fig(lag.extra?.floorHealthP99 ?? NaN)} ms)`,
        "p99 ≤ 50 ms",
      ),
    );
  }
  return out;
}

export const suite: BenchSuite = { name: SUITE, run: scaleRows, readme: scaleReadme };
