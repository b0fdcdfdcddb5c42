/**
 * `forge-ts worker`: a BullMQ worker process. It takes runs of the workflows it is given
 * (`--workflow`, checkpointed in `--store`, resumed there when a worker died mid-run) and eval
 * jobs of the backends it has (`--eval sim,ollama`).
 */
import { ContextManager } from "../context/context-manager.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { LLMClient } from "../core/llm.js";
import { assertBackend, runClients, type LoadedWorkflow } from "../cli-kit/backends.js";
import { positiveInt } from "../cli-kit/run-cli.js";
import { loadWorkflowModule } from "./workflow-module.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { openStore, storeSpec } from "./store.js";
import { createForgeMetrics } from "../telemetry/metrics.js";
import { serveMetrics } from "../telemetry/serve-metrics.js";
import { connectVisualizer, DEFAULT_VISUALIZER_URL, type VisualizerInspector } from "../../visualizer/inspector.js";

export const WORKER_HELP = `Usage: forge-ts worker --redis <url> [--workflow <module>]... [--eval <backends>] [options]

Takes jobs from BullMQ queues on Redis until Ctrl-C / SIGTERM:
  runs of each --workflow (enqueued with enqueueRun), checkpointed in --store; a run whose
  worker died is resumed from its last checkpoint by the next worker that takes it;
  eval jobs (npm run eval:batch -- --queue <url>) of the backends listed with --eval.

  --redis <url>          redis://host:port[/db]                                     [FORGE_REDIS]
  --store <dir|url>      run store shared by the workers: a directory, or a libSQL or postgres://… URL
                         (file:runs.db, libsql://host, postgres://host/db) for workers on several machines;
                         default ./.forge                                           [FORGE_STORE]
  --workflow <module>    a module exporting a Workflow (repeatable)
  --eval <list>          take eval jobs of these backends, e.g. sim,ollama
  --concurrency <n>      jobs at once per queue, default 1
  --lock-ms <ms>         a job's lock: how soon a dead worker's job moves on, default 30000
  --lease-ms <ms>        a run's lease in the store: how soon another worker may take over a
                         dead or paused worker's run; default the --lock-ms value
  --drain-ms <ms>        on Ctrl-C / SIGTERM, how long the jobs in flight may take to finish,
                         default 30000
  --metrics-port <n>     serve Prometheus metrics at http://<host>:<n>/metrics: runs, jobs, run
                         durations, active runs, lease takeovers, nudges, rescues, tokens [FORGE_METRICS_PORT]
  --metrics-host <addr>  where that listens, default 127.0.0.1 (0.0.0.0 for a remote scraper) [FORGE_METRICS_HOST]
  --metrics-token <t>    require Authorization: Bearer <t> from scrapers             [FORGE_METRICS_TOKEN]
  --visualize            stream the runs this worker executes to the visualizer (forge-ts visualize)
  --visualizer-url <url> default http://127.0.0.1:4848                               [FORGE_VISUALIZER_URL]
Runs' backend (with --workflow):
  --backend <name>       sim | ollama | llamaserver | llamafile | openai | anthropic [FORGE_BACKEND]
                         (sim plays the module's exported "oracle", else a schema-driven
                         one; one --workflow only)
  --model <name>         for sim: clean (default) | small-model | chaotic           [FORGE_MODEL]
  --base-url, --mode, --think, --api-key, --timeout, --recommended-sampling   as for forge-ts run
  --budget <tokens>      context budget, default 8192
  --max-iterations <n>   default 10
  -h, --help

Exit codes: 0 after Ctrl-C / SIGTERM (jobs in flight finish first), 1 Redis (unreachable, or it
refused the credentials), a backend or the visualizer (--visualize) is unreachable at start, the
--metrics-port cannot be listened on, or
the shutdown did not complete within --drain-ms; 2 bad flags.`;

export async function workerMain(args: readonly string[], signals: NodeJS.EventEmitter = process): Promise<number> {
  const env = process.env;
  const { values } = parseCliArgs({
    args: [...args],
    options: {
      redis: { type: "string", default: env.FORGE_REDIS || undefined },
      store: { type: "string" },
      workflow: { type: "string", multiple: true },
      eval: { type: "string" },
      concurrency: { type: "string" },
      "lock-ms": { type: "string" },
      "lease-ms": { type: "string" },
      "drain-ms": { type: "string" },
      "metrics-port": { type: "string", default: env.FORGE_METRICS_PORT || undefined },
      "metrics-host": { type: "string", default: env.FORGE_METRICS_HOST || "127.0.0.1" },
      "metrics-token": { type: "string", default: env.FORGE_METRICS_TOKEN || undefined },
      visualize: { type: "boolean", default: false },
      "visualizer-url": { type: "string", default: env.FORGE_VISUALIZER_URL || DEFAULT_VISUALIZER_URL },
      backend: { type: "string", default: env.FORGE_BACKEND || undefined },
      model: { type: "string", default: env.FORGE_MODEL || undefined },
      "base-url": { type: "string", default: env.FORGE_BASE_URL || undefined },
      mode: { type: "string" },
      think: { type: "string" },
      "api-key": { type: "string" },
      timeout: { type: "string" },
      budget: { type: "string" },
      "max-iterations": { type: "string" },
      "recommended-sampling": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return console.log(WORKER_HELP), 0;
  if (!values.redis) throw new InvalidArgumentError("--redis", "required (e.g. redis://127.0.0.1:6379, or FORGE_REDIS)");
  // Loaded here, not at the top: they need bullmq and ioredis (optional peers), and --help must
  // print without them.
  const { assertRedisReachable, redactUrl, redisOptions } = await import("../queue/redis.js");
  const { startRunWorker } = await import("../queue/run-worker.js");
  redisOptions(values.redis);
  const concurrency = positiveInt("concurrency", values.concurrency, 1);
  const lockDurationMs = positiveInt("lock-ms", values["lock-ms"], 30_000);
  const leaseMs = positiveInt("lease-ms", values["lease-ms"], lockDurationMs);
  if (leaseMs < 100) throw new InvalidArgumentError("--lease-ms", `must be at least 100 ms, got ${leaseMs}`);
  const drainMs = positiveInt("drain-ms", values["drain-ms"], 30_000);
  const metricsPort = metricsPortOf(values["metrics-port"]);
  if (metricsPort === undefined && (values["metrics-token"] !== undefined || values["metrics-host"] !== "127.0.0.1")) {
    throw new InvalidArgumentError("--metrics-host", "--metrics-host and --metrics-token need --metrics-port");
  }
  if (values["metrics-token"] === "") throw new InvalidArgumentError("--metrics-token", "must not be empty");
  const evalBackends = values.eval === undefined ? [] : values.eval.split(",").map((b) => b.trim());
  for (const b of evalBackends) assertBackend(b);
  const modules = values.workflow ?? [];
  if (modules.length === 0 && evalBackends.length === 0) throw new InvalidArgumentError("arguments", "give --workflow <module> (runs), --eval <backends> (eval jobs), or both");

  const budgetTokens = positiveInt("budget", values.budget, 8192);
  const maxIterations = positiveInt("max-iterations", values["max-iterations"], 10);
  // Flags and modules first (exit 2), then what must answer: the runs' backend, Redis (exit 1).
  const loaded = await Promise.all(modules.map((m) => loadWorkflowModule(m)));
  const makeClient = loaded.length > 0 ? await clientFor(values, loaded) : undefined;
  if (typeof makeClient === "string") {
    console.error(`forge-ts worker: ${makeClient}`);
    return 1;
  }
  let inspect: VisualizerInspector | undefined;
  try {
    await assertRedisReachable(values.redis);
    if (values.visualize) inspect = await connectVisualizer(values["visualizer-url"]);
  } catch (error) {
    console.error(`forge-ts worker: ${(error as Error).message}`);
    return 1;
  }
  const closers: (() => Promise<void>)[] = [];
  // The process's own metrics too (CPU, memory, event-loop lag): this process is the worker.
  const metrics = metricsPort === undefined ? undefined : createForgeMetrics();
  if (metrics) {
    try {
      const endpoint = await serveMetrics(metrics, { port: metricsPort!, host: values["metrics-host"], ...(values["metrics-token"] ? { bearerToken: values["metrics-token"] } : {}) });
      console.log(`forge-ts worker: metrics at ${endpoint.url}/metrics`);
      closers.push(endpoint.close);
    } catch (error) {
      console.error(`forge-ts worker: cannot serve metrics on ${values["metrics-host"]}:${metricsPort}: ${(error as Error).message}`);
      return 1;
    }
  }
  if (makeClient) {
    const { store } = await openStore(storeSpec(values.store, ".forge"), { leaseMs });
    const runs = startRunWorker({
      redis: values.redis,
      store,
      workflows: loaded.map((m) => m.workflow),
      runner: () => ({ client: makeClient(), contextManager: new ContextManager({ budgetTokens }), maxIterations, ...(inspect ? { inspect } : {}) }),
      concurrency,
      lockDurationMs,
      ...(metrics ? { metrics } : {}),
    });
    closers.push(runs.close);
  }
  if (evalBackends.length > 0) {
    const { startEvalWorker } = await import("../../eval/queue.js");
    closers.push(startEvalWorker({ redis: values.redis, backends: evalBackends, concurrency, lockDurationMs, ...(inspect ? { inspect } : {}) }).close);
  }
  console.log(
    `forge-ts worker ${process.pid} on ${redactUrl(values.redis)}: ${[
      modules.length > 0 ? `runs of ${modules.join(", ")} (store ${storeSpec(values.store, ".forge")})` : "",
      evalBackends.length > 0 ? `eval jobs of ${evalBackends.join(", ")}` : "",
    ]
      .filter(Boolean)
      .join("; ")}`,
  );
  await new Promise<void>((resolve) => {
    const stop = (name: string) => {
      console.log(`forge-ts worker: ${name}, finishing the jobs in flight`);
      resolve();
    };
    signals.once("SIGINT", () => stop("SIGINT"));
    signals.once("SIGTERM", () => stop("SIGTERM"));
  });
  // Jobs in flight finish first, for up to --drain-ms: a Redis that went away, or a run that
  // takes longer, cannot be waited for forever. A run cut off here is resumed from its last
  // checkpoint by the worker that takes its job next.
  const closed = Promise.all(closers.map((close) => close())).then(() => true);
  const gaveUp = new Promise<false>((resolve) => setTimeout(() => resolve(false), drainMs).unref());
  if (await Promise.race([closed, gaveUp])) return 0;
  console.error(`forge-ts worker: not closed cleanly within ${drainMs} ms (--drain-ms; Redis unreachable, or a job still running); exiting`);
  return 1;
}

type Values = Record<string, string | string[] | boolean | undefined>;

/** --metrics-port: 0..65535 (0 picks a free port and prints it). */
function metricsPortOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const port = Number(raw);
  if (raw.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidArgumentError("--metrics-port", `expected a port number 0..65535, got "${raw}"`);
  return port;
}

/** A client per run: the simulated model plays the module's oracle (or a schema-driven one); a real backend must answer first. */
async function clientFor(values: Values, modules: LoadedWorkflow[]): Promise<(() => LLMClient) | string> {
  const backend = values.backend as string | undefined;
  // One runner factory serves every workflow of this worker, so sim can play one module only.
  if (backend === "sim" && modules.length !== 1) throw new InvalidArgumentError("--backend", 'sim plays one workflow module (its exported oracle, else a schema-driven one); give one --workflow');
  const flag = (name: string) => values[name] as string | undefined;
  const flags = { model: flag("model"), baseUrl: flag("base-url"), mode: flag("mode"), think: flag("think"), apiKey: flag("api-key"), timeout: flag("timeout"), recommendedSampling: values["recommended-sampling"] === true };
  const { clientFor, problem } = await runClients(backend, flags, modules);
  return problem ?? (() => clientFor(modules[0]!.workflow));
}
