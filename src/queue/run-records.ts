/**
 * What Redis knows of a queued run beside its BullMQ job: its workflow and session (so that
 * cancelRun(runId) finds the job and its turn) and whether it was cancelled. The cancel mark is
 * persistent, and also announced on a pub/sub channel: the worker driving the run hears it at
 * once, and a worker that takes the job later, or missed the message, reads the mark.
 */
import type { Redis } from "ioredis";

/** Workers listen here for run ids to cancel. */
export const CANCEL_CHANNEL = "forge:cancel";

/** Kept past the jobs' own retention (a day), so that a cancel of a finished run still finds it. */
export const RUN_RECORD_TTL_MS = 2 * 86_400_000;

const recordKey = (runId: string) => `forge:run:${runId}`;

export interface RunRecord {
  workflow?: string;
  sessionId?: string;
  cancelled: boolean;
}

/** Before the job is added: cancelRun then finds the run even if its producer dies right after. */
export async function writeRunRecord(client: Redis, runId: string, record: { workflow: string; sessionId?: string }, ttlMs = RUN_RECORD_TTL_MS): Promise<void> {
  const fields: Record<string, string> = { workflow: record.workflow, ...(record.sessionId !== undefined ? { session: record.sessionId } : {}) };
  await client.multi().hset(recordKey(runId), fields).pexpire(recordKey(runId), ttlMs).exec();
}

export async function readRunRecord(client: Redis, runId: string): Promise<RunRecord | undefined> {
  const h = await client.hgetall(recordKey(runId));
  if (Object.keys(h).length === 0) return undefined;
  return { ...(h.workflow ? { workflow: h.workflow } : {}), ...(h.session ? { sessionId: h.session } : {}), cancelled: h.cancelled !== undefined };
}

export async function isCancelled(client: Redis, runId: string): Promise<boolean> {
  return (await client.hexists(recordKey(runId), "cancelled")) === 1;
}

/** Mark the run cancelled (before any job exists, too) and tell the workers. */
export async function markCancelled(client: Redis, runId: string, ttlMs = RUN_RECORD_TTL_MS): Promise<void> {
  await client.multi().hset(recordKey(runId), "cancelled", String(Date.now())).pexpire(recordKey(runId), ttlMs).publish(CANCEL_CHANNEL, runId).exec();
}

/**
 * A decided run asked to go back in the queue (`resumeRun`). Read and cleared by whoever
 * requeues it: resumeRun when the job is already parked, or the worker whose job is just
 * parking (a decision may come while the job is still finishing "waiting").
 */
export async function markResume(client: Redis, runId: string, ttlMs = RUN_RECORD_TTL_MS): Promise<void> {
  await client.multi().hset(recordKey(runId), "resume", String(Date.now())).pexpire(recordKey(runId), ttlMs).exec();
}

/** Clears the resume mark; true when there was one (one caller wins). */
export async function takeResume(client: Redis, runId: string): Promise<boolean> {
  return (await client.hdel(recordKey(runId), "resume")) === 1;
}
