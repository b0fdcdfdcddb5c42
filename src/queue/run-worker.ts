/**
 * The worker side of the run queue: each job is one WorkflowRunner run checkpointed in the
 * RunStore. A worker that dies mid-job (kill -9, a lost box) stops renewing the job's lock;
 * BullMQ's stalled-job check puts the job back, and the next worker resumes the run from its
 * last checkpoint: finished tools are not run again, an in-flight one runs again with the same
 * idempotency key.
 */
import { DelayedError, type Job, type Worker } from "bullmq";
import { Redis } from "ioredis";
import { InvalidArgumentError, reviveError, type ErrorJSON } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import type { RunStore } from "../persistence/run-store.js";
import { WorkflowRunner } from "../runner.js";
import type { WorkflowRunnerOptions } from "../runner/options.js";
import { closeWorkers, redisOptions, startWorkers } from "./redis.js";
import { runQueueName, sessionKeys, type RunJobData, type RunJobResult } from "./run-queue.js";

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
  /** A session turn waiting for the turn before it is looked at again after this long (default 100 ms). */
  sessionWaitMs?: number;
}

/** One BullMQ worker per workflow (see runQueueName); close them all to stop. */
export function startRunWorker(options: RunWorkerOptions): { workers: Worker<RunJobData, RunJobResult>[]; close(): Promise<void> } {
  const workflows = new Map(options.workflows.map((w) => [w.name, w]));
  if (workflows.size === 0) throw new InvalidArgumentError("workflows", "a run worker needs at least one workflow");
  const { store } = options;
  const sessionWaitMs = options.sessionWaitMs ?? 100;

  const processor = async (job: Job<RunJobData, RunJobResult>, token?: string): Promise<RunJobResult> => {
    const d = job.data;
    const workflow = workflows.get(d.workflow);
    if (!workflow) throw new InvalidArgumentError("workflow", `job ${job.id} names workflow "${d.workflow}", which this worker does not run`);
    if (d.sessionId !== undefined && d.turn !== undefined && d.turn > 1) {
      const done = Number((await redis.get(sessionKeys(d.sessionId).done)) ?? 0);
      if (done < d.turn - 1) {
        // The turn before is not finished: wait without holding a worker slot.
        await job.moveToDelayed(Date.now() + sessionWaitMs, token);
        throw new DelayedError();
      }
    }
    try {
      return { result: await runOrResume(store, new WorkflowRunner({ ...options.runner(), store }), workflow, d) };
    } finally {
      // The session moves on once this turn reached a final state, whichever it was.
      const latest = d.sessionId !== undefined ? await store.latest(d.runId).catch(() => undefined) : undefined;
      if (latest?.status === "done") await redis.set(sessionKeys(d.sessionId!).done, String(d.turn));
    }
  };

  // Our own connection for the session markers (BullMQ keeps its clients to itself).
  const redis = new Redis(redisOptions(options.redis));
  const workers = startWorkers([...workflows.keys()].map(runQueueName), processor, options);
  return {
    workers,
    async close() {
      await closeWorkers(workers);
      redis.disconnect();
    },
  };
}

/** A new run, or the one a dead worker left in the store: resumed, or answered if it had ended. */
async function runOrResume(store: RunStore, runner: WorkflowRunner, workflow: Workflow, d: RunJobData): Promise<unknown> {
  const checkpoint = await store.latest(d.runId);
  if (!checkpoint) {
    return runner.run(workflow, d.text, { runId: d.runId, ...(d.sessionId !== undefined ? { sessionId: d.sessionId } : {}), ...(d.promptVars ? { promptVars: d.promptVars } : {}) });
  }
  if (checkpoint.status === "active") return runner.resume(d.runId, workflow);
  // Finished before its worker could report it.
  const context = checkpoint.snapshot.context as { terminal?: { result: unknown }; error?: ErrorJSON };
  if (context.error) throw reviveError(context.error);
  return context.terminal?.result;
}
