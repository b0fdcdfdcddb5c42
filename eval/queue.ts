/**
 * Distributed eval batches on BullMQ. The enqueuer adds one job per planned run (its JSONL
 * resume key `config|scenario|runIndex` and the seed make the job id: enqueueing a batch again
 * adds nothing twice) to the queue of the row's backend, `forge-eval-<backend>`; workers on any
 * machine take the jobs of the backends they have; the enqueuer writes the records to one JSONL
 * file in plan order, so the file reads like a local batch of the same seed.
 */
import type { Job, Queue, QueueEvents } from "bullmq";
import { InvalidArgumentError } from "../src/core/index.js";
import type { InspectionSink } from "../src/runner/options.js";
import { bullmq } from "../src/queue/packages.js";
import { assertRedisReachable, closeWorkers, jobIdOf, redactUrl, redisOptions, startWorkers } from "../src/queue/redis.js";
import { waitForJob } from "../src/queue/wait.js";
import { runConfigFor, withAblation, type BatchOptions, type BatchRow } from "./batch.js";
import { releaseAll, type EvalFixture } from "./fixture.js";
import { currentKeys, EVAL_GENERATION } from "./generation.js";
import { planKeys, runScenario } from "./harness.js";
import { openResults, RunRecordSchema, type RunRecord } from "./run-record.js";
import { ALL_SCENARIOS, selectScenarios } from "./scenarios/index.js";

export const evalQueueName = (backend: string) => `forge-eval-${jobIdOf(backend)}`;

/**
 * The job id of a planned run: its resume key, plus the batch seed (the key leaves the seed
 * out, and a batch with another seed is other runs, not these again) and the suite generation
 * (a job of an older generation still in Redis must not answer for this one).
 */
export const evalJobId = (key: string, seed: number) => jobIdOf(`${key}|seed=${seed}|gen=${EVAL_GENERATION}`);

export interface EvalJobData {
  row: BatchRow;
  seed: number;
  timeoutMs?: number;
  scenario: string;
  runIndex: number;
  key: string;
}

export type QueueCounts = Record<"waiting" | "active" | "completed" | "failed", number>;

export interface QueuedBatchOptions extends BatchOptions {
  redis: string;
  /** Called about once a second with the batch's queues' counts (summed). */
  onCounts?: (counts: QueueCounts) => void;
}

/**
 * Enqueue a batch and wait for its records; resolves like runBatch.
 *
 * @example await runQueuedBatch({ config: loadBatchConfig("sim"), runs: 5, out: "r.jsonl", redis: "redis://127.0.0.1:6379" });
 */
export async function runQueuedBatch(options: QueuedBatchOptions): Promise<{ ran: number; skipped: number }> {
  const connection = redisOptions(options.redis);
  await assertRedisReachable(options.redis);
  const file = openResults(options.out, options.log);
  const have = currentKeys(file.records);
  const scenarios = selectScenarios({ names: options.config.scenarios, tags: options.config.tags });
  const queues = new Map<string, { queue: Queue; events: QueueEvents }>();
  const queueFor = async (backend: string) => {
    let q = queues.get(backend);
    if (!q) {
      q = { queue: new bullmq.Queue(evalQueueName(backend), { connection }), events: new bullmq.QueueEvents(evalQueueName(backend), { connection }) };
      // Connection errors while Redis restarts: the clients reconnect by themselves; say so once per outage.
      q.queue.on("error", reportOutage);
      q.events.on("error", reportOutage);
      queues.set(backend, q);
      await q.events.waitUntilReady();
    }
    return q;
  };
  let counting: NodeJS.Timeout | undefined;
  let outage = false;
  const reportOutage = (error: Error) => {
    if (outage) return;
    outage = true;
    (options.log ?? console.error)(`[eval] Redis at ${redactUrl(options.redis)}: ${error.message} (reconnecting)`);
  };
  try {
    const planned: { key: string; jobId: string; q: { queue: Queue; events: QueueEvents } }[] = [];
    let skipped = 0;
    for (const row of withAblation(options.config, options.ablation)) {
      const config = runConfigFor(row, options.config.seed, options.timeoutMs);
      for (const { scenario, runIndex, key } of planKeys({ scenarios, runs: options.runs, config })) {
        if (have.has(key)) {
          skipped++;
          continue;
        }
        const q = await queueFor(row.backend);
        const data: EvalJobData = { row, seed: options.config.seed, scenario: scenario.name, runIndex, key, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) };
        // An existing job id (a batch enqueued before) is not added again: its result is awaited.
        const jobId = evalJobId(key, options.config.seed);
        await q.queue.add("eval", data, { jobId, removeOnComplete: { age: 7 * 86_400 }, removeOnFail: { age: 7 * 86_400 } });
        planned.push({ key, jobId, q });
      }
    }
    if (options.onCounts) {
      const report = async () => options.onCounts!(await countsOf([...queues.values()].map((q) => q.queue)));
      counting = setInterval(() => void report().catch(() => undefined), 1_000);
    }
    let ran = 0;
    // In plan order: one job watched at a time (a job that finished earlier is answered at once).
    for (const { key, jobId, q } of planned) {
      let value: unknown;
      try {
        value = await waitForJob(q.queue, q.events, jobId, { pollMs: 1_000 });
      } catch (error) {
        throw new Error(`eval job ${key} failed on its worker: ${(error as Error).message}`, { cause: error });
      }
      outage = false;
      const record: RunRecord = RunRecordSchema.parse(value);
      // A worker on older code measures an older suite: its record would pass for a current one.
      if (record.generation !== EVAL_GENERATION) throw new Error(`eval job ${key}: the worker recorded generation ${record.generation}, this suite is generation ${EVAL_GENERATION}; update the worker's forge-ts`);
      file.append(record);
      ran++;
      options.onRecord?.(record);
    }
    if (options.onCounts) options.onCounts(await countsOf([...queues.values()].map((q) => q.queue)));
    return { ran, skipped };
  } finally {
    clearInterval(counting);
    for (const q of queues.values()) await Promise.all([q.events.close(), q.queue.close()]);
  }
}

async function countsOf(queues: readonly Queue[]): Promise<QueueCounts> {
  const total: QueueCounts = { waiting: 0, active: 0, completed: 0, failed: 0 };
  for (const q of queues) {
    const c = await q.getJobCounts("waiting", "delayed", "active", "completed", "failed");
    total.waiting += (c.waiting ?? 0) + (c.delayed ?? 0);
    total.active += c.active ?? 0;
    total.completed += c.completed ?? 0;
    total.failed += c.failed ?? 0;
  }
  return total;
}

/**
 * Workers for the eval jobs of `backends` (one BullMQ worker per backend queue). A fixture a
 * job needs (the mcp family's server) is opened at its first job and held until close().
 */
export function startEvalWorker(options: {
  redis: string;
  backends: readonly string[];
  concurrency?: number;
  lockDurationMs?: number;
  /** Every run's inspection events (visualizerInspector: watch the worker's runs live). */
  inspect?: InspectionSink;
}): { close(): Promise<void> } {
  if (options.backends.length === 0) throw new InvalidArgumentError("backends", "an eval worker needs at least one backend");
  const held = new Map<EvalFixture<unknown>, Promise<void>>();
  const hold = (fixture: EvalFixture<unknown>): Promise<void> => {
    let acquired = held.get(fixture);
    if (!acquired) {
      // A failed opening is forgotten, so the next job tries again instead of failing on a stale error.
      acquired = fixture.acquire().catch((error: unknown) => {
        held.delete(fixture);
        throw error;
      });
      held.set(fixture, acquired);
    }
    return acquired;
  };
  const processor = async (job: Job<EvalJobData>): Promise<RunRecord> => {
    const d = job.data;
    const scenario = ALL_SCENARIOS.find((s) => s.name === d.scenario);
    if (!scenario) throw new InvalidArgumentError("scenario", `job ${job.id} names scenario "${d.scenario}", which this worker does not have`);
    if (scenario.fixture) await hold(scenario.fixture);
    return runScenario(scenario, { ...runConfigFor(d.row, d.seed, d.timeoutMs), ...(options.inspect ? { inspect: options.inspect } : {}) }, d.runIndex);
  };
  const workers = startWorkers(options.backends.map(evalQueueName), processor, options);
  return {
    close: async () => {
      try {
        await closeWorkers(workers);
      } finally {
        const opened = await Promise.allSettled([...held].map(async ([fixture, acquired]) => (await acquired, fixture)));
        held.clear();
        await releaseAll(opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : [])));
      }
    },
  };
}
