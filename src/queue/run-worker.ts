/**
 * The worker side of the run queue: each job is one WorkflowRunner run checkpointed in the
 * RunStore (run-job.ts). A worker that dies mid-job (kill -9, a lost box) stops renewing the
 * job's lock; BullMQ's stalled-job check puts the job back, and the next worker resumes the run
 * from its last checkpoint: finished tools are not run again, an in-flight one runs again with
 * the same idempotency key.
 *
 * A session turn ends when BullMQ finishes its job in any way — completed, failed for good
 * (attempts spent, cancelled, timed out, failed fast, or failed by BullMQ for stalling too
 * often, which happens without our processor) — and the worker's 'completed' / 'failed' events
 * release it: the session's next turn is let in and its parked job promoted.
 */
import type { Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { bullmq, ioredis } from "./packages.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import type { RunStore } from "../persistence/run-store.js";
import type { ForgeMetrics } from "../telemetry/metrics.js";
import type { WorkflowRunnerOptions } from "../runner/options.js";
import type { RunJobData } from "./enqueue-options.js";
import { closeWorkers, outageReporter, redisOptions, startWorkers } from "./redis.js";
import { CANCELLED, runJobProcessor, TurnEndError } from "./run-job.js";
import { runQueueName, type RunJobResult } from "./run-queue.js";
import { CANCEL_CHANNEL, isCancelled, takeResume } from "./run-records.js";
import { promoteParked, SessionTurns, type TurnEnd } from "./session-turns.js";

export interface RunWorkerOptions {
  redis: string;
  store: RunStore;
  /** The workflows this worker runs, by name. */
  workflows: readonly Workflow[];
  /** Everything a run's WorkflowRunner needs but the store (a new runner per job). */
  runner: () => Omit<WorkflowRunnerOptions, "store">;
  /** Runs at once per workflow (default 1). */
  concurrency?: number;
  /** How long a job stays claimed without its worker renewing it (default 30 s): how soon a dead worker's run moves on. */
  lockDurationMs?: number;
  /**
   * A session turn parked until the turn before it ends is woken by that turn's release; it
   * also wakes after this long (default 60 s), which only matters when the releasing worker
   * died in the hand-over.
   */
  sessionBackstopMs?: number;
  /** At most one progress update per job this often (default 250 ms). */
  progressIntervalMs?: number;
  /**
   * Count jobs by outcome here, and give it to every run's WorkflowRunner (unless `runner()`
   * names its own): runs, durations, active runs, lease takeovers. Serve it with serveMetrics.
   */
  metrics?: ForgeMetrics;
}

/** One BullMQ worker per workflow (see runQueueName); close them all to stop. */
export function startRunWorker(options: RunWorkerOptions): { workers: Worker<RunJobData, RunJobResult>[]; close(): Promise<void> } {
  const workflows = new Map(options.workflows.map((w) => [w.name, w]));
  if (workflows.size === 0) throw new InvalidArgumentError("workflows", "a run worker needs at least one workflow");
  if ((options as { sessionWaitMs?: unknown }).sessionWaitMs !== undefined) {
    throw new InvalidArgumentError("sessionWaitMs", "removed: a waiting session turn is woken when the turn before ends, not polled; sessionBackstopMs sets how long it sleeps at most");
  }
  for (const key of ["sessionBackstopMs", "progressIntervalMs"] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new InvalidArgumentError(key, `expected a positive integer of milliseconds, got ${JSON.stringify(value)}`);
  }

  // Every client we make reports its connection errors once per outage: none goes unhandled.
  const outages = outageReporter("forge-ts worker");
  const client = new ioredis.Redis(redisOptions(options.redis));
  const subscriber = client.duplicate();
  for (const c of [client, subscriber]) {
    outages.watch(c);
    c.on("ready", outages.recovered);
  }
  const running = new Map<string, AbortController>();
  const metrics = options.metrics;
  if (metrics !== undefined && (typeof metrics !== "object" || metrics === null || typeof (metrics as { label?: unknown }).label !== "function")) {
    throw new InvalidArgumentError("metrics", "expected a metric set made by createForgeMetrics()");
  }
  subscriber.on("message", (_channel: string, runId: string) => running.get(runId)?.abort(CANCELLED));
  // On every (re)connection: subscribed first (SUBSCRIBE resolves once the server confirms), then
  // the cancel marks of the runs in flight read, so a cancel published while the connection was
  // down is seen now rather than never (the mark is written before the message is published).
  subscriber.on("ready", () => {
    void (async () => {
      await subscriber.subscribe(CANCEL_CHANNEL);
      for (const [runId, controller] of running) if (await isCancelled(client, runId)) controller.abort(CANCELLED);
    })().catch(() => undefined);
  });

  const queues = new Map<string, Queue>();
  const queueFor = (workflow: string) => {
    let queue = queues.get(workflow);
    if (!queue) {
      queues.set(workflow, (queue = new bullmq.Queue(runQueueName(workflow), { connection: client })));
      outages.watch(queue);
    }
    return queue;
  };
  const turns = new SessionTurns(client);
  const processor = runJobProcessor({
    store: options.store,
    workflows,
    runner: metrics === undefined ? options.runner : () => ({ metrics, ...options.runner() }),
    client,
    turns,
    queueFor,
    running,
    backstopMs: options.sessionBackstopMs ?? 60_000,
    progressIntervalMs: options.progressIntervalMs ?? 250,
    print: (line) => console.error(`forge-ts worker: ${line}`),
  });
  const workers = startWorkers([...workflows.keys()].map(runQueueName), processor, { ...options, outages });

  // Releases in flight, awaited by close() so that a turn finished during shutdown lets the next one in.
  const releasing = new Set<Promise<void>>();
  const endTurn = (d: RunJobData, end: TurnEnd) => {
    const done = (async () => {
      try {
        const { parked } = await turns.release(d.sessionId!, { runId: d.runId, workflow: d.workflow }, end);
        await promoteParked(queueFor, parked);
      } catch {
        // Redis away: the next turn's parked job releases this one when it wakes (releaseIfEnded).
      }
    })();
    releasing.add(done);
    void done.finally(() => releasing.delete(done));
  };
  for (const worker of workers) {
    worker.on("completed", (job: Job<RunJobData, RunJobResult>, result: RunJobResult) => {
      metrics?.jobs.inc({ queue: worker.name, outcome: result?.waiting ? "waiting" : "completed" });
      // A run parked for a person keeps its session's turn until it is decided and finished;
      // one decided while it was parking goes straight back in the queue.
      if (result?.waiting) return void requeueIfDecided(client, job);
      if (job.data.sessionId !== undefined) endTurn(job.data, { kind: "done" });
    });
    worker.on("failed", (job: Job<RunJobData, RunJobResult> | undefined, error: Error) => {
      // finishedOn: failed for good; without it the job goes back to wait for its next attempt.
      metrics?.jobs.inc({ queue: worker.name, outcome: job?.finishedOn ? "failed" : "retried" });
      // finishedOn: failed for good (a failure with attempts left goes back to wait for a retry).
      if (!job || job.data.sessionId === undefined || !job.finishedOn) return;
      endTurn(job.data, error instanceof TurnEndError ? error.end : { kind: "failed" });
    });
  }
  return {
    workers,
    async close() {
      await closeWorkers(workers);
      await Promise.all(releasing);
      await Promise.all([...queues.values()].map((q) => q.close().catch(() => undefined)));
      subscriber.disconnect();
      client.disconnect();
    },
  };
}

/** A resumeRun that came while this job was parking left a mark: requeue it now. */
async function requeueIfDecided(client: Redis, job: Job<RunJobData, RunJobResult>): Promise<void> {
  try {
    if (await takeResume(client, job.data.runId)) await job.retry("completed");
  } catch {
    // Redis away, or resumeRun requeued it meanwhile: the mark or the job says what to do next.
  }
}
