/**
 * A job's outcome: BullMQ's completion events, and a look at the job itself every `pollMs`.
 * Events alone can be missed (a QueueEvents reader starts at the stream's end, so a job that
 * finishes while it is starting up is never announced to it); the look makes that a delay, not
 * a hang. `failed` and `gone` turn a failed job and a vanished one into the caller's errors
 * (the run queue revives the worker's typed error, and tells a cancelled run from a lost one).
 */
import type { Queue, QueueEvents } from "bullmq";
import { bullmq } from "./packages.js";

export interface WaitOptions {
  pollMs?: number;
  timeoutMs?: number;
  failed?: (failedReason: string) => Promise<Error>;
  gone?: () => Promise<Error>;
}

export function waitForJob(queue: Queue, events: QueueEvents, jobId: string, options: WaitOptions = {}): Promise<unknown> {
  const pollMs = options.pollMs ?? 500;
  const failed = options.failed ?? (async (reason: string) => new Error(reason));
  const gone = options.gone ?? (async () => new Error(`job ${jobId} is gone from queue ${queue.name}`));
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(deadline);
      events.off(`completed:${jobId}` as "completed", onCompleted);
      events.off(`failed:${jobId}` as "failed", onFailed);
      f();
    };
    const onCompleted = ({ returnvalue }: { returnvalue: unknown }) => finish(() => resolve(typeof returnvalue === "string" ? parseMaybe(returnvalue) : returnvalue));
    // Settled at once (a late event or look changes nothing), rejected once the error is built.
    const rejectWith = (error: () => Promise<Error>) => {
      if (!settled) finish(() => void error().then(reject, reject));
    };
    const onFailed = ({ failedReason }: { failedReason: string }) => rejectWith(() => failed(failedReason));
    events.on(`completed:${jobId}` as "completed", onCompleted as never);
    events.on(`failed:${jobId}` as "failed", onFailed as never);
    const look = async () => {
      // The state first, then the job: read the other way round, a job that finishes in between
      // would be "completed" with the return value it did not have yet.
      const state = await queue.getJobState(jobId);
      if (state === "unknown") return rejectWith(gone);
      if (state !== "completed" && state !== "failed") return;
      const job = await bullmq.Job.fromId(queue, jobId);
      if (!job) return rejectWith(gone);
      // Requeued in between (resumeRun retries a parked run's job): the requeue erased the
      // outcome the state named, in the same step as its finish time; the next one comes later.
      if (!job.finishedOn) return;
      if (state === "completed") finish(() => resolve(job.returnvalue));
      else rejectWith(() => failed(job.failedReason));
    };
    const poll = setInterval(() => void look().catch(() => undefined), pollMs);
    const deadline = options.timeoutMs === undefined ? undefined : setTimeout(() => finish(() => reject(new Error(`job ${jobId} did not finish within ${options.timeoutMs} ms`))), options.timeoutMs);
    void look().catch(() => undefined);
  });
}

/** QueueEvents hands over return values as JSON text. */
function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
