/**
 * Sessions at scale: runs go on a BullMQ queue and any `forge-ts worker` takes them. A run's
 * job id is its run id (enqueueing the same run twice adds it once), and a session's turns are
 * numbered as they are enqueued: a worker starts turn n only once turn n-1 has finished, so a
 * session has one active job at a time, in order, however many workers there are.
 */
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { InvalidArgumentError } from "../core/errors.js";
import { assertRunId } from "../persistence/run-store.js";
import { jobIdOf, redisOptions } from "./redis.js";
import { waitForJob } from "./wait.js";

/**
 * One queue per workflow, `forge-runs-<workflow>`: a worker takes the runs of the workflows it
 * was started with, and a run no worker can take waits for one that can.
 */
export const runQueueName = (workflow: string) => `forge-runs-${jobIdOf(workflow)}`;

export interface RunJobData {
  /** The Workflow's name: workers are started with the workflows they can run. */
  workflow: string;
  runId: string;
  text: string;
  sessionId?: string;
  /** 1, 2, 3... per session, in enqueue order. */
  turn?: number;
  promptVars?: Record<string, string>;
}

/** What a worker returns for a run: the terminal tool's result. */
export interface RunJobResult {
  result: unknown;
}

export interface EnqueueRunOptions {
  workflow: string | { name: string };
  text: string;
  sessionId?: string;
  runId?: string;
  promptVars?: Record<string, string>;
}

export interface EnqueuedRun {
  jobId: string;
  runId: string;
  turn?: number;
  /** The run's result once a worker finished it; rejects with the run's error. */
  result(timeoutMs?: number): Promise<unknown>;
}

export interface RunQueue {
  enqueueRun(options: EnqueueRunOptions): Promise<EnqueuedRun>;
  /** A workflow's jobs waiting, active, delayed (a session turn waiting for the one before), completed, failed. */
  counts(workflow: string): Promise<Record<"waiting" | "active" | "delayed" | "completed" | "failed", number>>;
  close(): Promise<void>;
}

/** Redis key of a session's turn counter and of its last finished turn. */
export const sessionKeys = (sessionId: string) => ({ turns: `forge:session:${sessionId}:turns`, done: `forge:session:${sessionId}:done` });

/**
 * @example
 * const queue = createRunQueue({ redis: "redis://127.0.0.1:6379" });
 * const run = await queue.enqueueRun({ workflow: "support", sessionId: "ops", text: "hello" });
 * console.log(await run.result());
 */
export function createRunQueue(options: { redis: string }): RunQueue {
  const connection = redisOptions(options.redis);
  const queues = new Map<string, { queue: Queue; events?: QueueEvents }>();
  const queueOf = (workflow: string) => {
    let q = queues.get(workflow);
    if (!q) queues.set(workflow, (q = { queue: new Queue(runQueueName(workflow), { connection }) }));
    return q;
  };
  // Our own connection for the session counters (BullMQ keeps its client to itself).
  const redis = new Redis(connection);

  return {
    async enqueueRun(o) {
      const workflow = typeof o.workflow === "string" ? o.workflow : o.workflow?.name;
      if (typeof workflow !== "string" || workflow === "") throw new InvalidArgumentError("workflow", "expected a workflow name (or a Workflow)");
      if (typeof o.text !== "string") throw new InvalidArgumentError("text", "expected a string");
      const runId = o.runId ?? globalThis.crypto.randomUUID();
      assertRunId(runId);
      if (o.sessionId !== undefined) assertRunId(o.sessionId);
      const q = queueOf(workflow);
      const { queue } = q;
      const existing = (await queue.getJob(runId)) as { id?: string; data: RunJobData } | undefined;
      let turn = existing?.data.turn;
      if (!existing && o.sessionId !== undefined) turn = await redis.incr(sessionKeys(o.sessionId).turns);
      const data: RunJobData = {
        workflow,
        runId,
        text: o.text,
        ...(o.sessionId !== undefined ? { sessionId: o.sessionId, turn: turn! } : {}),
        ...(o.promptVars ? { promptVars: o.promptVars } : {}),
      };
      // Kept a day after finishing, so result() works for a caller who comes back for it.
      const job = existing ?? (await queue.add("run", data, { jobId: runId, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } }));
      return {
        jobId: job.id!,
        runId,
        ...(data.turn !== undefined ? { turn: data.turn } : {}),
        result: async (timeoutMs?: number) => {
          q.events ??= new QueueEvents(runQueueName(workflow), { connection });
          const done = (await waitForJob(queue, q.events, runId, timeoutMs === undefined ? {} : { timeoutMs })) as RunJobResult;
          return done.result;
        },
      };
    },
    async counts(workflow) {
      const c = await queueOf(workflow).queue.getJobCounts("waiting", "active", "delayed", "completed", "failed");
      return { waiting: c.waiting ?? 0, active: c.active ?? 0, delayed: c.delayed ?? 0, completed: c.completed ?? 0, failed: c.failed ?? 0 };
    },
    async close() {
      for (const q of queues.values()) await Promise.all([q.events?.close(), q.queue.close()]);
      redis.disconnect();
    },
  };
}
