/**
 * Sessions at scale: runs go on a BullMQ queue and any `forge-ts worker` takes them. A run's
 * job id is its run id (enqueueing the same run twice adds it once), and a session's turns are
 * numbered in Redis, atomically, as they are enqueued: a worker starts turn n only once turn
 * n-1 has ended, so a session has one active job at a time, in order, however many workers
 * and producers there are (session-turns.ts).
 */
import type { JobState, Queue, QueueEvents } from "bullmq";
import { bullmq } from "./packages.js";
import { InvalidArgumentError, RunWaitingError, WorkflowCancelledError, type PendingHumanRequest } from "../core/errors.js";
import { assertRunId } from "../persistence/run-store.js";
import { checkedEnqueue, type EnqueueRunOptions, type RunJobData } from "./enqueue-options.js";
import { gatedClient } from "./gated-client.js";
import { jobError } from "./job-errors.js";
import type { RunProgress } from "./progress.js";
import { jobIdOf, redisOptions } from "./redis.js";
import { isCancelled, markCancelled, markResume, readRunRecord, takeResume, writeRunRecord } from "./run-records.js";
import { SESSION_TTL_MS } from "./session-scripts.js";
import { promoteParked, SessionTurns } from "./session-turns.js";
import { waitForJob } from "./wait.js";

export type { EnqueueRunOptions, RunJobData } from "./enqueue-options.js";

/**
 * One queue per workflow, `forge-runs-<workflow>`: a worker takes the runs of the workflows it
 * was started with, and a run no worker can take waits for one that can.
 */
export const runQueueName = (workflow: string) => `forge-runs-${jobIdOf(workflow)}`;

/**
 * What a worker returns for a run: the terminal tool's result, or the requests it waits on (a
 * waiting run frees its worker; `resumeRun` puts it back in the queue once it is decided).
 */
export interface RunJobResult {
  result: unknown;
  waiting?: PendingHumanRequest[];
}

export interface EnqueuedRun {
  jobId: string;
  runId: string;
  /** The run's turn in its session: 1, 2, 3... in the order the session's turns were enqueued. */
  turn?: number;
  /** The run's result once a worker finished it; rejects with the run's (typed) error, or RunWaitingError when it waits for a person. */
  result(timeoutMs?: number): Promise<unknown>;
}

/** A run's job as BullMQ has it, with the progress its worker publishes. */
export interface RunJobInfo {
  state: JobState | "unknown";
  progress: RunProgress | undefined;
  attemptsMade: number;
  failedReason: string | undefined;
}

/** What cancelRun did: removed a job that had not started, signalled the worker driving it, found it finished, or found no job (yet). */
export type CancelOutcome = "removed" | "signalled" | "finished" | "not-found";

export interface RunQueue {
  enqueueRun(options: EnqueueRunOptions): Promise<EnqueuedRun>;
  /**
   * Cancel a run: one not started yet is removed (it never runs); a running one is stopped by
   * its worker, checkpointed "cancelled"; a job enqueued later under this id is cancelled when
   * a worker takes it. Either way the session's next turn is let in (and fails fast unless
   * enqueued with afterFailure "continue").
   */
  cancelRun(runId: string): Promise<CancelOutcome>;
  /**
   * Put a run that parked waiting for a person back in the queue, once its decisions are
   * recorded (`recordDecision`, `forge-ts runs approve`): a worker continues it. "requeued", or
   * "not-waiting" when its job did not end waiting (still queued, running, or finished).
   */
  resumeRun(workflow: string | { name: string }, runId: string): Promise<"requeued" | "not-waiting">;
  /** A run's job: state, progress `{ state, iteration }`, attempts, failure; undefined when there is none. */
  job(workflow: string | { name: string }, runId: string): Promise<RunJobInfo | undefined>;
  /** A workflow's jobs waiting (prioritized ones too), active, delayed (parked session turns, retries, delays), completed, failed. */
  counts(workflow: string): Promise<Record<"waiting" | "active" | "delayed" | "completed" | "failed", number>>;
  close(): Promise<void>;
}

export interface RunQueueOptions {
  redis: string;
  /**
   * How long a call waits for its connection to Redis before it fails with a ServerError
   * (default 5000 ms). Once connected, a Redis that stops answering fails the call after 30 s
   * without a reply to one of its commands.
   */
  connectTimeoutMs?: number;
}

/** A job still waiting to start: cancelRun removes it. */
const NOT_STARTED = new Set<string>(["waiting", "delayed", "prioritized", "waiting-children", "paused"]);

/**
 * @example
 * const queue = createRunQueue({ redis: "redis://127.0.0.1:6379" });
 * const run = await queue.enqueueRun({ workflow: "support", sessionId: "ops", text: "hello", timeoutMs: 60_000 });
 * console.log(await run.result());
 */
export function createRunQueue(options: RunQueueOptions): RunQueue {
  const connection = redisOptions(options.redis);
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  if (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs <= 0) throw new InvalidArgumentError("connectTimeoutMs", `expected a positive integer of milliseconds, got ${JSON.stringify(options.connectTimeoutMs)}`);
  const gate = gatedClient(options.redis, connectTimeoutMs);
  const { client } = gate;
  const turns = new SessionTurns(client);
  const ignore = () => undefined; // connection errors: the gate reports them to the caller
  const queues = new Map<string, { queue: Queue; events?: QueueEvents }>();
  // Created once the gate saw Redis ready: a Queue whose first connection fails stays broken.
  const queueOf = (workflow: string) => {
    let q = queues.get(workflow);
    if (!q) {
      queues.set(workflow, (q = { queue: new bullmq.Queue(runQueueName(workflow), { connection: client }) }));
      q.queue.on("error", ignore);
    }
    return q;
  };
  const queueFor = (workflow: string) => queueOf(workflow).queue;
  const cancelledError = () => new WorkflowCancelledError([], [], 0, "cancelled before it started (cancelRun)");

  return {
    async enqueueRun(o) {
      const { workflow, runId, data, jobOptions } = checkedEnqueue(o);
      const sessionId = data.sessionId;
      return gate.use(async () => {
        await writeRunRecord(client, runId, { workflow, ...(sessionId !== undefined ? { sessionId } : {}) });
        const q = queueOf(workflow);
        // The job first, then its turn: a producer dying in between leaves a job without a turn,
        // which the worker that takes it numbers, never a numbered turn without a job (which
        // would hold up every later turn of the session).
        await q.queue.add("run", data, jobOptions);
        const turn = sessionId === undefined ? undefined : await turns.register(sessionId, { runId, workflow }, SESSION_TTL_MS + (jobOptions.delay ?? 0));
        return {
          jobId: runId,
          runId,
          ...(turn !== undefined ? { turn } : {}),
          result: async (timeoutMs?: number) => {
            if (!q.events) {
              q.events = new bullmq.QueueEvents(runQueueName(workflow), { connection });
              q.events.on("error", ignore);
            }
            const done = (await waitForJob(q.queue, q.events, runId, {
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
              failed: (reason) => jobError(q.queue, runId, reason),
              gone: async () => ((await isCancelled(client, runId).catch(() => false)) ? cancelledError() : new Error(`job ${runId} is gone from queue ${q.queue.name}`)),
            })) as RunJobResult;
            if (done.waiting) throw new RunWaitingError(runId, done.waiting);
            return done.result;
          },
        };
      });
    },

    async cancelRun(runId) {
      assertRunId(runId);
      return gate.use(async () => {
        const record = await readRunRecord(client, runId);
        const job = record?.workflow === undefined ? undefined : await queueFor(record.workflow).getJob(runId);
        if (!record?.workflow || !job) {
          await markCancelled(client, runId);
          return "not-found";
        }
        // The state before the mark: a worker that sees the mark ends the job at once, and that
        // end is this cancel's doing, not a run that had finished ("finished" only for those).
        const state = await job.getState();
        if (state === "completed" || state === "failed") return "finished";
        await markCancelled(client, runId);
        if (!NOT_STARTED.has(state)) return "signalled";
        try {
          await job.remove();
        } catch {
          return "signalled"; // a worker took it meanwhile: it reads the cancel mark
        }
        if (record.sessionId !== undefined) {
          const { parked } = await turns.release(record.sessionId, { runId, workflow: record.workflow }, { kind: "cancelled" });
          await promoteParked(queueFor, parked);
        }
        return "removed";
      });
    },

    async resumeRun(workflow, runId) {
      const name = typeof workflow === "string" ? workflow : workflow?.name;
      if (typeof name !== "string" || name === "") throw new InvalidArgumentError("workflow", "expected a workflow name (or a Workflow)");
      assertRunId(runId);
      return gate.use(async () => {
        const queue = queueFor(name);
        const job = await queue.getJob(runId);
        if (job) {
          // The mark first, the state second: a job that parks in between finds the mark.
          await markResume(client, runId);
          const state = await job.getState();
          // Still running (or queued): its worker requeues it if it ends parked.
          if (state !== "completed" && state !== "failed") return "requeued";
          const parked = state === "completed" && Boolean(((await queue.getJob(runId))?.returnvalue as RunJobResult | undefined)?.waiting);
          // One of resumeRun and the parking worker takes the mark and requeues.
          if (!(await takeResume(client, runId))) return "requeued";
          if (!parked) return "not-waiting";
          await job.retry("completed");
          return "requeued";
        }
        // The parked job was cleaned up meanwhile (kept a day): a new one continues the run from
        // the store (its text is not needed: the run's history is there).
        const record = await readRunRecord(client, runId);
        const data: RunJobData = { workflow: name, runId, text: "", ...(record?.sessionId !== undefined ? { sessionId: record.sessionId } : {}) };
        await queue.add("run", data, { jobId: runId, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } });
        return "requeued";
      });
    },

    async job(workflow, runId) {
      const name = typeof workflow === "string" ? workflow : workflow?.name;
      if (typeof name !== "string" || name === "") throw new InvalidArgumentError("workflow", "expected a workflow name (or a Workflow)");
      return gate.use(async () => {
        const job = await queueFor(name).getJob(runId);
        if (!job) return undefined;
        const progress = job.progress as Partial<RunProgress> | number | undefined;
        return {
          state: await job.getState(),
          progress: typeof progress === "object" && progress !== null && typeof progress.state === "string" ? (progress as RunProgress) : undefined,
          attemptsMade: job.attemptsMade,
          failedReason: job.failedReason || undefined,
        };
      });
    },

    async counts(workflow) {
      return gate.use(async () => {
        const c = await queueFor(workflow).getJobCounts("waiting", "prioritized", "active", "delayed", "completed", "failed");
        return { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, delayed: c.delayed ?? 0, completed: c.completed ?? 0, failed: c.failed ?? 0 };
      });
    },

    async close() {
      for (const q of queues.values()) await Promise.all([q.events?.close(), q.queue.close()]).catch(ignore);
      gate.close();
    },
  };
}

export type { RunProgress } from "./progress.js";
