/**
 * enqueueRun's options, checked up front (an InvalidArgumentError naming the field, before
 * anything is queued) and split into the job's data and BullMQ's job options.
 */
import type { Context } from "@opentelemetry/api";
import type { JobsOptions } from "bullmq";
import { injectTraceCarrier, type TraceCarrier } from "../telemetry/trace-carrier.js";
import { InvalidArgumentError } from "../core/errors.js";
import { MAX_TIMER_MS } from "../core/tool.js";
import { assertRunId } from "../persistence/run-store.js";

/** What a worker needs of a run: the job's data. */
export interface RunJobData {
  /** The Workflow's name: workers are started with the workflows they can run. */
  workflow: string;
  runId: string;
  text: string;
  sessionId?: string;
  promptVars?: Record<string, string>;
  /** A session turn after a failed or cancelled one: "fail" (default) fails at once, "continue" runs anyway. */
  afterFailure?: "fail" | "continue";
  /** Each attempt is cancelled (its signal aborted) after this long on a worker. */
  timeoutMs?: number;
  /** The producer's trace context (`traceparent`, ...): the worker's run span continues it. */
  trace?: TraceCarrier;
}

export interface EnqueueRunOptions {
  workflow: string | { name: string };
  text: string;
  sessionId?: string;
  /** The job id too: enqueueing a run id again adds nothing (a safe retry after an error). */
  runId?: string;
  promptVars?: Record<string, string>;
  /** Attempts of the job before it fails for good (default 1). A run that ended failed in the store fails again on a retry; retries cover what happens around it (a worker or store error). */
  attempts?: number;
  /** The wait between attempts, BullMQ's: `{ type: "fixed" | "exponential", delay }` in ms. */
  backoff?: { type: "fixed" | "exponential"; delay: number };
  /** BullMQ's priority: 1 (first) to 2,097,151; jobs without one go before prioritized jobs. */
  priority?: number;
  /** Milliseconds before the job may start. */
  delay?: number;
  /** The run is cancelled after this long on a worker (each attempt): it ends "cancelled" in the store and the job fails. */
  timeoutMs?: number;
  /** After an earlier turn of the session failed or was cancelled: "fail" (default) fails this turn at once with SessionTurnFailedError; "continue" runs it. */
  afterFailure?: "fail" | "continue";
  /**
   * The OpenTelemetry context the run's span continues on the worker (default: the active
   * context, when a context manager is registered). Sent in the job by the registered propagator.
   */
  traceContext?: Context;
}

/** Jobs are kept a day after finishing, so that result() works for a caller who comes back for it. */
const KEEP = { removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } };

const MAX_PRIORITY = 2_097_151;

function integer(field: string, value: unknown, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(field, `expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function checkedEnqueue(o: EnqueueRunOptions): { workflow: string; runId: string; data: RunJobData; jobOptions: JobsOptions } {
  if (!o || typeof o !== "object") throw new InvalidArgumentError("options", "expected { workflow, text, ... }");
  const workflow = typeof o.workflow === "string" ? o.workflow : o.workflow?.name;
  if (typeof workflow !== "string" || workflow === "") throw new InvalidArgumentError("workflow", "expected a workflow name (or a Workflow)");
  if (typeof o.text !== "string") throw new InvalidArgumentError("text", "expected a string");
  const runId = o.runId ?? globalThis.crypto.randomUUID();
  assertRunId(runId);
  if (o.sessionId !== undefined) assertRunId(o.sessionId);
  if (o.promptVars !== undefined && (typeof o.promptVars !== "object" || o.promptVars === null || !Object.values(o.promptVars).every((v) => typeof v === "string"))) {
    throw new InvalidArgumentError("promptVars", "expected an object of strings");
  }
  if (o.afterFailure !== undefined && o.afterFailure !== "fail" && o.afterFailure !== "continue") throw new InvalidArgumentError("afterFailure", `expected "fail" or "continue", got ${JSON.stringify(o.afterFailure)}`);
  if (o.afterFailure !== undefined && o.sessionId === undefined) throw new InvalidArgumentError("afterFailure", "only a session's turns have turns before them: give sessionId too");
  const attempts = integer("attempts", o.attempts, 1, 1_000);
  const priority = integer("priority", o.priority, 1, MAX_PRIORITY);
  const delay = integer("delay", o.delay, 0, MAX_TIMER_MS);
  const timeoutMs = integer("timeoutMs", o.timeoutMs, 1, MAX_TIMER_MS);
  const traceContext: unknown = o.traceContext;
  if (traceContext !== undefined && typeof (traceContext as { getValue?: unknown } | null)?.getValue !== "function") {
    throw new InvalidArgumentError("traceContext", "expected an OpenTelemetry Context (context.active(), trace.setSpan(...))");
  }
  const trace = injectTraceCarrier(o.traceContext);
  let backoff: JobsOptions["backoff"];
  if (o.backoff !== undefined) {
    const b = o.backoff as { type?: unknown; delay?: unknown } | null;
    if (!b || typeof b !== "object" || (b.type !== "fixed" && b.type !== "exponential")) throw new InvalidArgumentError("backoff", 'expected { type: "fixed" | "exponential", delay: ms }');
    backoff = { type: b.type, delay: integer("backoff.delay", b.delay, 0, MAX_TIMER_MS) ?? 0 };
  }
  const data: RunJobData = {
    workflow,
    runId,
    text: o.text,
    ...(o.sessionId !== undefined ? { sessionId: o.sessionId } : {}),
    ...(o.promptVars ? { promptVars: o.promptVars } : {}),
    ...(o.afterFailure ? { afterFailure: o.afterFailure } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(trace ? { trace } : {}),
  };
  const jobOptions: JobsOptions = {
    jobId: runId,
    ...KEEP,
    ...(attempts !== undefined ? { attempts } : {}),
    ...(backoff ? { backoff } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(delay !== undefined ? { delay } : {}),
  };
  return { workflow, runId, data, jobOptions };
}
