/**
 * A failed run's typed error across Redis. BullMQ keeps only the message (`failedReason`); the
 * worker also logs the error's JSON form on the job, so that `result()` rejects with the same
 * class (SessionTurnFailedError, WorkflowCancelledError, ToolExecutionError, ...) and fields.
 */
import type { Job, Queue } from "bullmq";
import { errorToJSON, reviveError, SessionTurnFailedError, type ErrorJSON } from "../core/errors.js";

const MARK = "forge-error ";

/** Never fails the job it describes: a log that cannot be written leaves `failedReason`. */
export async function logJobError(job: Job, error: unknown): Promise<void> {
  const { data, ...json } = errorToJSON(error);
  // A cancelled run's error carries the whole conversation, which the run store keeps anyway.
  const { messages: _messages, ...rest } = data;
  await job.log(MARK + JSON.stringify({ ...json, data: rest })).catch(() => undefined);
}

/** How many of a job's latest log lines are searched for its error. */
const LOG_LINES = 50;

/**
 * The error a failed job's result() rejects with: the newest logged one whose message is the
 * job's failedReason, revived; else its failedReason. The message must match: a worker that lost
 * the job (cut off from Redis while it failed) logs its own error once it reconnects, after the
 * worker that really failed the job; BullMQ refuses its failure (the lock is gone), but not its
 * log line.
 */
export async function jobError(queue: Queue, jobId: string, failedReason: string): Promise<Error> {
  const { logs } = await queue.getJobLogs(jobId, 0, LOG_LINES - 1, false).catch(() => ({ logs: [] as string[] }));
  for (const line of logs) {
    if (!line.startsWith(MARK)) continue;
    let json: ErrorJSON;
    try {
      json = JSON.parse(line.slice(MARK.length)) as ErrorJSON;
    } catch {
      continue; // not ours after all
    }
    if (json.message === failedReason) return revive(json);
  }
  return new Error(failedReason);
}

function revive(json: ErrorJSON): Error {
  if (json.code !== "FORGE_SESSION_TURN_FAILED") return reviveError(json);
  const d = json.data as Record<string, unknown>;
  const text = (k: string) => String(d[k] ?? "");
  return new SessionTurnFailedError(text("sessionId"), text("runId"), Number(d.turn), text("failedRunId"), Number(d.failedTurn), d.outcome === "cancelled" ? "cancelled" : "failed");
}
