/**
 * `forge-ts proxy --workers <n>`: n processes on one port (node:cluster), each the stateless proxy
 * of a single process. The primary serves nothing: it forks the workers, replaces one that dies
 * (backing off when they die as soon as they start), answers their questions about the whole —
 * GET /metrics aggregated with prom-client's AggregatorRegistry, GET /forge/stats summed, the
 * number of live workers for /health — and on SIGTERM or SIGINT drains them all.
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";
import { percentile, type ProxyStatsSnapshot } from "../proxy/proxy-stats.js";
import type { ProxyServer, ProxyViews } from "../proxy/create-proxy.js";
import { HttpError } from "../proxy-request/http-error.js";

/** Longest a worker waits for the primary's answer about the whole. */
const ASK_WAIT_MS = 5_000;
/** Longest the primary waits for the serving workers' reports (under ASK_WAIT_MS: the asker hears why). */
const REPORT_WAIT_MS = 3_000;
/** A worker that dies before it listens, or this soon after, counts as a quick death. */
const QUICK_DEATH_MS = 1_000;
/** Quick deaths in a row after which the primary gives up (a crash loop, not bad luck). */
const MAX_QUICK_DEATHS = 5;
/** The wait before the replacement of the first quick death; it doubles with each one after. */
const BACKOFF_MS = 250;

type Report = "metrics" | "stats";
type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;
type StatsReport = { snapshot: ProxyStatsSnapshot; samples: readonly number[] };
type ToPrimary = { forge: "listening" } | { forge: "ask"; id: number; what: Report } | { forge: "report"; id: number; body: MetricsJson | StatsReport };
type ToWorker = { forge: "answer"; id: number; body?: unknown; error?: string } | { forge: "report?"; id: number; what: Report } | { forge: "live"; live: number };

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
 * Metrics that are one process's limit, not its share of the whole: the workers' values are not
 * added (prom-client sums what names no aggregator).
 */
const PER_PROCESS_LIMITS = new Set(["forge_process_max_fds"]);

/**
 * The workers' metrics as one scrape: prom-client's cluster aggregation of each worker's
 * registry (counters and histograms added, process figures by each metric's own aggregator).
 */
export async function aggregateMetrics(workers: MetricsJson[]): Promise<string> {
  for (const metrics of workers) for (const m of metrics) if (PER_PROCESS_LIMITS.has(m.name)) m.aggregator = "max";
  return AggregatorRegistry.aggregate(workers).metrics();
}

/** Replies to one request for the serving workers' reports. */
interface Gathering {
  waiting: Set<Worker>;
  replies: { worker: Worker; body: unknown }[];
  done(): void;
}

/**
 * The primary: fork `count` workers (the same command line; the first prints the start-up lines),
 * serve their questions, replace the dead, and drain all on a signal. Resolves to the exit code,
 * once every worker has ended: 0 after a drain, the code of a worker that could not start before
 * any served (no port: 1), or 1 after a crash loop.
 */
export async function runPrimary(count: number, signals: NodeJS.EventEmitter): Promise<number> {
  const started = new Set<Worker>();
  /** The serving workers, with when each said it listens. */
  const listening = new Map<Worker, number>();
  const gatherings = new Map<number, Gathering>();
  const reforks = new Set<NodeJS.Timeout>();
  let served = false;
  let quickDeaths = 0;
  let stopping = false;
  let result = 0;
  let nextId = 0;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));

  const tell = (worker: Worker, message: ToWorker) => {
    if (worker.isConnected()) worker.send(message);
  };
  const announceLive = () => {
    for (const w of listening.keys()) tell(w, { forge: "live", live: listening.size });
  };
  const fork = (quiet: boolean) => {
    const worker = cluster.fork({ FORGE_PROXY_WORKER_QUIET: quiet ? "1" : "" });
    started.add(worker);
    // A send racing the worker's exit; the exit itself is reported below.
    worker.on("error", (error: Error) => console.error(`forge-ts proxy: worker ${worker.process.pid}: ${error.message}`));
    worker.on("message", (message: unknown) => void onMessage(worker, message));
  };

  async function onMessage(worker: Worker, message: unknown): Promise<void> {
    // A message read after its worker's exit: that worker is gone, whatever it said.
    if (!isForge(message) || !started.has(worker)) return;
    const m = message as ToPrimary;
    if (m.forge === "listening") {
      listening.set(worker, Date.now());
      if (!served) console.log(`  workers: ${count} processes on one port, each a whole proxy (--workers)`);
      served = true;
      // Serving past the quick-death window ends a run of quick deaths.
      setTimeout(() => listening.has(worker) && (quickDeaths = 0), QUICK_DEATH_MS).unref();
      announceLive();
    } else if (m.forge === "report") {
      const gathering = gatherings.get(m.id);
      if (!gathering?.waiting.delete(worker)) return;
      gathering.replies.push({ worker, body: m.body });
      if (gathering.waiting.size === 0) gathering.done();
    } else if (m.forge === "ask") {
      let answer: ToWorker;
      try {
        answer = { forge: "answer", id: m.id, body: m.what === "metrics" ? await allMetrics() : await allStats() };
      } catch (error) {
        answer = { forge: "answer", id: m.id, error: (error as Error).message };
      }
      tell(worker, answer);
    }
  }

  /**
   * Every serving worker's report. A replacement still starting is not asked (it has counted
   * nothing yet, and could not answer); one that ends meanwhile drops out, its counts with it.
   */
  async function gather(what: Report): Promise<{ replies: Gathering["replies"]; complete: boolean }> {
    const workers = [...listening.keys()].filter((w) => w.isConnected());
    const id = ++nextId;
    const gathering: Gathering = { waiting: new Set(workers), replies: [], done: () => undefined };
    const complete = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), REPORT_WAIT_MS);
      gathering.done = () => (clearTimeout(timer), resolve(true));
      gatherings.set(id, gathering);
      for (const w of workers) tell(w, { forge: "report?", id, what });
      if (workers.length === 0) gathering.done();
    });
    gatherings.delete(id);
    gathering.replies.sort((a, b) => a.worker.id - b.worker.id);
    return { replies: gathering.replies, complete };
  }

  async function allMetrics(): Promise<string> {
    const { replies, complete } = await gather("metrics");
    // A sum missing a live worker would read as a counter reset: better no scrape than a wrong one.
    if (!complete) throw new Error(`a worker did not report its metrics within ${REPORT_WAIT_MS} ms`);
    return aggregateMetrics(replies.map((r) => r.body as MetricsJson));
  }

  async function allStats() {
    const { replies } = await gather("stats");
    // Those that answered in time; `answered` below `live` says one did not.
    return sumStats(replies.map((r) => ({ pid: r.worker.process.pid ?? 0, ...(r.body as StatsReport) })), listening.size);
  }

  cluster.on("exit", (worker, code, signal) => {
    const listenedAt = listening.get(worker);
    started.delete(worker);
    listening.delete(worker);
    for (const gathering of gatherings.values()) if (gathering.waiting.delete(worker) && gathering.waiting.size === 0) gathering.done();
    announceLive();
    if (stopping) {
      if (started.size === 0) finish(result);
      return;
    }
    if (!served) {
      // None has served yet: the start itself failed (the port taken). Its own error line said why.
      end(code === 0 || code === null ? 1 : code);
      return;
    }
    const quick = listenedAt === undefined || Date.now() - listenedAt < QUICK_DEATH_MS;
    quickDeaths = quick ? quickDeaths + 1 : 0;
    const how = signal ?? `exit code ${code}`;
    if (quickDeaths >= MAX_QUICK_DEATHS) {
      console.error(`forge-ts proxy: worker ${worker.process.pid} ended (${how}); ${MAX_QUICK_DEATHS} workers in a row died within ${QUICK_DEATH_MS} ms of starting: giving up`);
      end(1);
      return;
    }
    const delay = quickDeaths === 0 ? 0 : BACKOFF_MS * 2 ** (quickDeaths - 1);
    console.error(`forge-ts proxy: worker ${worker.process.pid} ended (${how}); starting another${delay > 0 ? ` in ${delay} ms` : ""}`);
    const timer = setTimeout(() => {
      reforks.delete(timer);
      fork(true);
    }, delay);
    reforks.add(timer);
  });

  /** Stop every worker (each drains on SIGTERM); resolve with `code` once the last has ended. */
  function end(code: number): void {
    stopping = true;
    result = code;
    for (const timer of reforks) clearTimeout(timer);
    reforks.clear();
    for (const w of started) if (w.process.exitCode === null && w.process.signalCode === null) w.process.kill("SIGTERM");
    if (started.size === 0) finish(code);
  }

  const onSignal = (name: string) => {
    if (stopping) return;
    console.log(`forge-ts proxy: ${name}, draining ${started.size} workers (requests in flight finish; new connections are refused)`);
    end(0);
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
 * A worker's side: /metrics and /forge/stats ask the primary, which asks every serving worker
 * for its own registry and stats; /health adds the live workers the primary last announced.
 */
export function workerViews(registry: Registry): ProxyViews & { serving(proxy: ProxyServer): void } {
  let nextId = 0;
  let live = 0;
  const waiting = new Map<number, (answer: Extract<ToWorker, { forge: "answer" }>) => void>();
  let proxy: ProxyServer | undefined;
  const tell = (message: ToPrimary) => {
    if (process.connected) process.send!(message);
  };
  // The primary gone (killed), no connection reaches this worker any more: drain as on SIGTERM.
  // Emitted, not sent: a real second SIGTERM would find the drain's listener spent and kill.
  process.once("disconnect", () => process.emit("SIGTERM", "SIGTERM"));
  process.on("message", (message: unknown) => {
    if (!isForge(message)) return;
    const m = message as ToWorker;
    if (m.forge === "answer") {
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
    } else if (m.forge === "live") {
      live = m.live;
    } else if (m.forge === "report?" && proxy) {
      const serving = proxy;
      void (async () => {
        const body = m.what === "stats" ? { snapshot: serving.stats(), samples: [...serving.latencySamples()] } : await registry.getMetricsAsJSON();
        tell({ forge: "report", id: m.id, body });
      })();
    }
  });
  const ask = (what: Report) =>
    new Promise<unknown>((resolve, reject) => {
      if (!process.connected) return reject(new HttpError(503, "api_error", `The proxy's primary process is gone: no ${what} for all workers`));
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
      tell({ forge: "ask", id, what });
    });
  return {
    metrics: async () => new Response(String(await ask("metrics")), { headers: { "content-type": registry.contentType } }),
    stats: () => ask("stats"),
    health: () => ({ workers: live }),
    serving(p) {
      proxy = p;
      tell({ forge: "listening" });
    },
  };
}
