/**
 * `forge-ts proxy --workers <n>`: n processes on one port (node:cluster), each the stateless proxy
 * of a single process. The primary serves nothing: it forks the workers, replaces one that dies,
 * answers their questions about the whole — GET /metrics through prom-client's
 * AggregatorRegistry, GET /forge/stats summed — and on SIGTERM or SIGINT drains them all.
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";
import { percentile, type ProxyStatsSnapshot } from "../proxy/proxy-stats.js";
import type { ProxyServer, ProxyViews } from "../proxy/create-proxy.js";
import { HttpError } from "../proxy-request/http-error.js";

/** Longest a worker waits for the primary's answer about the whole. */
const ASK_WAIT_MS = 5_000;

/** A worker that dies this soon after it started counts as a quick death. */
const QUICK_DEATH_MS = 2_000;
/** Quick deaths in a row after which the primary gives up (a crash loop, not bad luck). */
const MAX_QUICK_DEATHS = 5;
/** Longest the primary waits for every worker's stats. */
const STATS_WAIT_MS = 2_000;

type ToPrimary =
  | { forge: "listening" }
  | { forge: "ask"; id: number; what: "metrics" | "stats" }
  | { forge: "stats"; id: number; snapshot: ProxyStatsSnapshot; samples: readonly number[] };
type ToWorker = { forge: "answer"; id: number; body?: unknown; error?: string } | { forge: "stats?"; id: number };

const isForge = (m: unknown): m is { forge: string } => typeof m === "object" && m !== null && typeof (m as { forge?: unknown }).forge === "string";

/** Each worker's stats and the samples behind its percentiles, as /forge/stats answers for all of them. */
export interface WorkerStats {
  pid: number;
  snapshot: ProxyStatsSnapshot;
  samples: readonly number[];
}

/**
 * The workers' stats as one: counts summed, the longest uptime, the percentiles over every
 * worker's samples together (percentiles do not add), and each worker's own counts.
 *
 * @example
 * sumStats([{ pid: 1, snapshot: a, samples: [1, 2] }, { pid: 2, snapshot: b, samples: [3] }]).requests; // a.requests + b.requests
 */
export function sumStats(workers: readonly WorkerStats[], live: number) {
  const counts = ["requests", "inFlight", "waiting", "guarded", "passThrough", "rescues", "retries", "exhausted", "failed", "cancelled", "rejected"] as const;
  const total = Object.fromEntries(counts.map((k) => [k, workers.reduce((n, w) => n + w.snapshot[k], 0)])) as Record<(typeof counts)[number], number>;
  const samples = workers.flatMap((w) => w.samples);
  const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
  return {
    uptimeSeconds: Math.max(0, ...workers.map((w) => w.snapshot.uptimeSeconds)),
    ...total,
    addedLatencyMs: { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)), samples: samples.length },
    workers: { live, answered: workers.length, each: workers.map((w) => ({ pid: w.pid, requests: w.snapshot.requests, inFlight: w.snapshot.inFlight })) },
  };
}

/**
 * The primary: fork `count` workers (the same command line; the first prints the start-up lines),
 * serve their questions, replace the dead, and drain all on a signal. Resolves to the exit code:
 * 0 after a drain, or the code of a worker that could not start (bad flags 2, no port 1), or 1
 * after a crash loop.
 */
export async function runPrimary(count: number, signals: NodeJS.EventEmitter): Promise<number> {
  const aggregator = new AggregatorRegistry();
  const started = new Map<Worker, number>();
  const listening = new Set<Worker>();
  let quickDeaths = 0;
  let announced = false;
  let stopping = false;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  let nextId = 0;
  const pendingStats = new Map<number, { replies: WorkerStats[]; expected: number; done: () => void }>();

  const fork = (quiet: boolean) => {
    const worker = cluster.fork({ FORGE_PROXY_WORKER_QUIET: quiet ? "1" : "" });
    started.set(worker, Date.now());
    worker.on("message", (message: unknown) => void onMessage(worker, message));
  };
  const live = () => [...started.keys()].filter((w) => w.isConnected());

  async function onMessage(worker: Worker, message: unknown): Promise<void> {
    if (!isForge(message)) return; // prom-client's own messages
    const m = message as ToPrimary;
    if (m.forge === "listening") {
      listening.add(worker);
      quickDeaths = 0;
      if (!announced) console.log(`  workers: ${count} processes on one port, each a whole proxy (--workers)`);
      announced = true;
    } else if (m.forge === "stats") {
      const pending = pendingStats.get(m.id);
      if (!pending) return;
      pending.replies.push({ pid: worker.process.pid ?? 0, snapshot: m.snapshot, samples: m.samples });
      if (pending.replies.length >= pending.expected) pending.done();
    } else if (m.forge === "ask") {
      let answer: ToWorker;
      try {
        answer = { forge: "answer", id: m.id, body: m.what === "metrics" ? await aggregator.clusterMetrics() : await allStats() };
      } catch (error) {
        // prom-client's: a worker that did not answer within its 5 s. The asking worker says so (503).
        answer = { forge: "answer", id: m.id, error: (error as Error).message };
      }
      if (worker.isConnected()) worker.send(answer);
    }
  }

  async function allStats() {
    // The serving ones: a replacement still starting has nothing to count yet.
    const workers = live().filter((w) => listening.has(w));
    const id = ++nextId;
    const replies: WorkerStats[] = [];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, STATS_WAIT_MS);
      pendingStats.set(id, { replies, expected: workers.length, done: () => (clearTimeout(timer), resolve()) });
      for (const w of workers) w.send({ forge: "stats?", id } satisfies ToWorker);
    });
    pendingStats.delete(id);
    return sumStats(replies, workers.length);
  }

  cluster.on("exit", (worker, code, signal) => {
    const lived = Date.now() - (started.get(worker) ?? 0);
    const wasListening = listening.delete(worker);
    started.delete(worker);
    if (stopping) {
      if (started.size === 0) finish(0);
      return;
    }
    if (!wasListening) {
      // It never served: bad flags, a port taken. Its own error line said why; the rest stop too.
      stopAll();
      finish(code === 0 || code === null ? 1 : code);
      return;
    }
    quickDeaths = lived < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    if (quickDeaths >= MAX_QUICK_DEATHS) {
      console.error(`forge-ts proxy: ${MAX_QUICK_DEATHS} workers died within ${QUICK_DEATH_MS} ms of starting; giving up`);
      stopAll();
      finish(1);
      return;
    }
    console.error(`forge-ts proxy: worker ${worker.process.pid} ended (${signal ?? `exit code ${code}`}); starting another`);
    fork(true);
  });

  function stopAll(): void {
    stopping = true;
    for (const w of started.keys()) if (w.process.exitCode === null) w.process.kill("SIGTERM");
  }

  const onSignal = (name: string) => {
    if (stopping) return;
    console.log(`forge-ts proxy: ${name}, draining ${started.size} workers (requests in flight finish; new ones are refused)`);
    stopAll();
    if (started.size === 0) finish(0);
  };
  signals.once("SIGINT", () => onSignal("SIGINT"));
  signals.once("SIGTERM", () => onSignal("SIGTERM"));
  for (let i = 0; i < count; i++) fork(i > 0);
  return finished;
}

/** True in a process the primary forked. */
export const isProxyWorker = (): boolean => cluster.isWorker;

/** A worker prints no start-up lines but the first one's. */
export const isQuietWorker = (): boolean => cluster.isWorker && process.env.FORGE_PROXY_WORKER_QUIET === "1";

/**
 * A worker's side: its registry is the one the primary aggregates, /metrics and /forge/stats
 * ask the primary, and the primary's stats requests get this worker's own.
 */
export function workerViews(registry: Registry): ProxyViews & { serving(proxy: ProxyServer): void } {
  // Constructed for its side effect in a worker: it answers the primary's requests for metrics.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let nextId = 0;
  const waiting = new Map<number, (answer: Extract<ToWorker, { forge: "answer" }>) => void>();
  let proxy: ProxyServer | undefined;
  // The primary gone (killed), no connection reaches this worker any more: drain and end.
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
  process.on("message", (message: unknown) => {
    if (!isForge(message)) return;
    const m = message as ToWorker;
    if (m.forge === "answer") {
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
    } else if (m.forge === "stats?" && proxy) {
      process.send!({ forge: "stats", id: m.id, snapshot: proxy.stats(), samples: [...proxy.latencySamples()] } satisfies ToPrimary);
    }
  });
  const ask = (what: "metrics" | "stats") =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++nextId;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new HttpError(503, "api_error", `The proxy's primary process did not answer for ${what} within ${ASK_WAIT_MS} ms`));
      }, ASK_WAIT_MS);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.error === undefined) resolve(answer.body);
        else reject(new HttpError(503, "api_error", `The proxy's workers could not be asked for ${what}: ${answer.error}`));
      });
      process.send!({ forge: "ask", id, what } satisfies ToPrimary);
    });
  return {
    metrics: async () => new Response(String(await ask("metrics")), { headers: { "content-type": registry.contentType } }),
    stats: () => ask("stats"),
    serving(p) {
      proxy = p;
      process.send!({ forge: "listening" } satisfies ToPrimary);
    },
  };
}
