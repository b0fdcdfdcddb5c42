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

/** The error a failed job's result() rejects with: the logged one revived, else its failedReason. */
export async function jobError(queue: Queue, jobId: string, failedReason: string): Promise<Error> {
  const { logs } = await queue.getJobLogs(jobId, 0, 0, false).catch(() => ({ logs: [] as string[] }));
  const last = logs[0];
  if (last?.startsWith(MARK)) {
    try {
      return revive(JSON.parse(last.slice(MARK.length)) as ErrorJSON);
    } catch {
      // not ours after all: the reason below
    }
  }
  return new Error(failedReason);
}

function revive(json: ErrorJSON): Error {
  if (json.code !== "FORGE_SESSION_TURN_FAILED") return reviveError(json);
  const d = json.data as Record<string, unknown>;
  const text = (k: string) => String(d[k] ?? "");
  return new SessionTurnFailedError(text("sessionId"), text("runId"), Number(d.turn), text("failedRunId"), Number(d.failedTurn), d.outcome === "cancelled" ? "cancelled" : "failed");
}
