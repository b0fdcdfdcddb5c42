/**
 * One run job on a worker: a cancel mark is honoured before anything runs; a session turn is
 * admitted (run now, fail fast after a failed turn, or park until its turn); then one
 * WorkflowRunner run (or the resume of one a dead worker left in the store) under an
 * AbortSignal that cancelRun and `timeoutMs` abort, publishing `{ state, iteration }` as the
 * job's progress. A run whose lease another runner holds is tried again when that lease ends.
 */
import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { bullmq } from "./packages.js";
import { InvalidArgumentError, reviveError, SessionTurnFailedError, WorkflowCancelledError, type ErrorJSON } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import { isFinalStatus, type RunStore } from "../persistence/run-store.js";
import { WorkflowRunner, type RunOutcome } from "../runner.js";
import type { WorkflowRunnerOptions } from "../runner/options.js";
import type { RunJobData } from "./enqueue-options.js";
import { asTraceCarrier, extractTraceCarrier } from "../telemetry/trace-carrier.js";
import { logJobError } from "./job-errors.js";
import { throttledProgress } from "./progress.js";
import { isCancelled } from "./run-records.js";
import type { RunJobResult } from "./run-queue.js";
import { promoteParked, releaseIfEnded, type SessionTurns, type TurnEnd } from "./session-turns.js";

/** The abort reason of a run stopped by cancelRun (a timeout aborts with its own). */
export const CANCELLED = "cancelled (cancelRun)";

export interface RunJobContext {
  store: RunStore;
  workflows: ReadonlyMap<string, Workflow>;
  runner: () => Omit<WorkflowRunnerOptions, "store">;
  client: Redis;
  turns: SessionTurns;
  queueFor: (workflow: string) => Queue;
  /** The runs this worker drives, by run id: a cancel message aborts one. */
  running: Map<string, AbortController>;
  /** How long a parked turn sleeps unless a release wakes it first. */
  backstopMs: number;
  progressIntervalMs: number;
  /** A line for the worker's stderr (a store outage a job waits out). */
  print: (line: string) => void;
}

/** How soon a job whose store did not answer is tried again. */
export const STORE_RETRY_MS = 1_000;

/** A turn this worker ended for good (cancelled, timed out, failed fast): BullMQ does not retry it. */
export class TurnEndError extends bullmq.UnrecoverableError {
  constructor(
    readonly end: Exclude<TurnEnd, { kind: "done" }>,
    readonly error: Error,
  ) {
    super(error.message);
  }
}

export function runJobProcessor(ctx: RunJobContext): (job: Job<RunJobData, RunJobResult>, token?: string) => Promise<RunJobResult> {
  return async (job, token) => {
    const d = job.data;
    const workflow = ctx.workflows.get(d.workflow);
    if (!workflow) throw new InvalidArgumentError("workflow", `job ${job.id} names workflow "${d.workflow}", which this worker does not run`);
    const controller = new AbortController();
    ctx.running.set(d.runId, controller);
    try {
      // Registered first: a cancel published from now on reaches the controller, and one
      // published before left its mark.
      if (await isCancelled(ctx.client, d.runId)) controller.abort(CANCELLED);
      if (!controller.signal.aborted && d.sessionId !== undefined) await admit(ctx, job, token, d.sessionId);
      if (controller.signal.aborted) throw new TurnEndError({ kind: "cancelled" }, new WorkflowCancelledError([], [], 0, "cancelled before it started (cancelRun)"));
      const outcome = await drive(ctx, job, token, workflow, controller);
      if (outcome.status === "done") return { result: outcome.result };
      // Parked for a person: the job completes (its worker is free) and the session's turn stays
      // taken until the run is decided, requeued (resumeRun) and finished.
      return { result: undefined, waiting: outcome.requests.map(({ callId, tool, args, kind, askedAt }) => ({ callId, tool, args, kind, askedAt })) };
    } catch (error) {
      if (await waitOutStore(ctx, job, token, error)) throw new bullmq.DelayedError();
      if (error instanceof TurnEndError) await logJobError(job, error.error);
      else if (!(error instanceof bullmq.DelayedError) && (error as { code?: unknown })?.code !== "FORGE_LOCK_LOST") await logJobError(job, error);
      throw error;
    } finally {
      if (ctx.running.get(d.runId) === controller) ctx.running.delete(d.runId);
    }
  };
}

/**
 * The store did not answer (its server restarting, or cut off from this host): the run is as it
 * last stored it, so its job is tried again shortly, as a Redis outage is waited out, without
 * spending an attempt. Each try is reported: an outage is never silent. False: not an outage, or
 * the job is no longer this worker's to move.
 */
async function waitOutStore(ctx: RunJobContext, job: Job<RunJobData, RunJobResult>, token: string | undefined, error: unknown): Promise<boolean> {
  const e = error as { code?: unknown; unreachable?: unknown; message?: unknown };
  if (e?.code !== "FORGE_STORE" || e.unreachable !== true) return false;
  ctx.print(`run ${job.data.runId}: ${String(e.message)}; trying again in ${STORE_RETRY_MS} ms`);
  return retryLater(job, token, STORE_RETRY_MS);
}

/** The job moved back to wait `ms` without spending an attempt; false when it is no longer this worker's to move. */
function retryLater(job: Job<RunJobData, RunJobResult>, token: string | undefined, ms: number): Promise<boolean> {
  return job.moveToDelayed(Date.now() + ms, token).then(
    () => true,
    () => false,
  );
}

/** Returns when the turn may run; otherwise throws (parked: DelayedError; failed fast: TurnEndError). */
async function admit(ctx: RunJobContext, job: Job<RunJobData, RunJobResult>, token: string | undefined, sessionId: string): Promise<void> {
  const run = { runId: job.data.runId, workflow: job.data.workflow };
  const afterFailure = job.data.afterFailure ?? "fail";
  let admission = await ctx.turns.admit(sessionId, run, afterFailure);
  if (admission.verdict === "wait" && admission.blocker && (await releaseIfEnded(ctx.turns, ctx.queueFor, sessionId, admission.blocker))) {
    admission = await ctx.turns.admit(sessionId, run, afterFailure);
  }
  if (admission.verdict === "run") return;
  if (admission.verdict === "fail") {
    // Its end is already recorded (naming the turn that failed first): let the next turn decide.
    await promoteParked(ctx.queueFor, admission.parked);
    const before = admission.because;
    const error = new SessionTurnFailedError(sessionId, run.runId, admission.turn, before.runId, before.turn, before.kind);
    throw new TurnEndError({ kind: before.kind, root: { runId: before.runId, turn: before.turn } }, error);
  }
  if (admission.verdict === "past") {
    // Finished in the store: runOrResume answers from it. Otherwise the turn ended without
    // finishing (failed fast, cancelled, given up) and the turns after it went on: running it
    // now would break the session's order.
    const stored = await ctx.store.latest(run.runId);
    if (stored && isFinalStatus(stored.status)) return;
    const o = admission.outcome;
    const root = o === undefined || o === "done" ? { kind: "failed" as const, runId: run.runId, turn: admission.turn } : o;
    const error = new SessionTurnFailedError(sessionId, run.runId, admission.turn, root.runId, root.turn, root.kind);
    throw new TurnEndError({ kind: root.kind, root: { runId: root.runId, turn: root.turn } }, error);
  }
  // Parked without holding a worker slot: the release of the turn before promotes the job. The
  // backstop delay is no polling: it only matters when the worker releasing that turn died
  // between its release and the promotion, or before releasing (then releaseIfEnded, above,
  // releases for it when this job wakes).
  await job.moveToDelayed(Date.now() + ctx.backstopMs, token);
  // A release between the admission above and the move found the job not yet delayed and could
  // not promote it: look once more, and promote ourselves if it let us in.
  if (await ctx.turns.admitted(sessionId, admission.turn)) await job.promote().catch(() => undefined);
  throw new bullmq.DelayedError();
}

async function drive(ctx: RunJobContext, job: Job<RunJobData, RunJobResult>, token: string | undefined, workflow: Workflow, controller: AbortController): Promise<RunOutcome> {
  const d = job.data;
  const progress = throttledProgress((p) => job.updateProgress(p), ctx.progressIntervalMs);
  const timer = d.timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(`timed out after ${d.timeoutMs} ms (timeoutMs)`), d.timeoutMs);
  const base = ctx.runner();
  const runner = new WorkflowRunner({
    ...base,
    store: ctx.store,
    onStateChange: (state, context) => {
      progress.report({ state, iteration: context.iteration });
      base.onStateChange?.(state, context);
    },
  });
  try {
    return await runOrResume(ctx.store, runner, workflow, d, controller.signal);
  } catch (error) {
    const failure = error as { code?: unknown; expiresInMs?: unknown };
    if (failure?.code === "FORGE_RUN_LOCKED" || failure?.code === "FORGE_LOCK_LOST") {
      // Another runner holds the run (a worker BullMQ gave up on, still finishing), or took it
      // from this one (its lease ran out while it was paused or slow): try again when that
      // lease ends (then resume, or answer from the store), without spending an attempt or
      // holding a slot meanwhile. If BullMQ gave this job to another worker, the move fails and
      // the job is that worker's.
      const left = typeof failure.expiresInMs === "number" ? failure.expiresInMs : 500;
      if (await retryLater(job, token, Math.min(Math.max(left, 100), 30_000))) throw new bullmq.DelayedError();
    }

    if (controller.signal.aborted) throw new TurnEndError({ kind: controller.signal.reason === CANCELLED ? "cancelled" : "failed" }, error as Error);
    throw error;
  } finally {
    clearTimeout(timer);
    await progress.close();
  }
}

/** A new run, or one already in the store (a dead worker's, or a decided wait): continued, or answered if it had ended. */
async function runOrResume(store: RunStore, runner: WorkflowRunner, workflow: Workflow, d: RunJobData, signal: AbortSignal): Promise<RunOutcome> {
  const checkpoint = await store.latest(d.runId);
  // The producer's trace, carried in the job: this attempt's run span continues it.
  const carrier = asTraceCarrier(d.trace);
  const traceContext = carrier ? { traceContext: extractTraceCarrier(carrier) } : {};
  if (!checkpoint) {
    try {
      return await runner.start(workflow, d.text, { runId: d.runId, signal, ...traceContext, ...(d.sessionId !== undefined ? { sessionId: d.sessionId } : {}), ...(d.promptVars ? { promptVars: d.promptVars } : {}) });
    } catch (error) {
      // Another worker started the run between the look above and this one's lease (it was
      // paused with the job): go on from what it stored, as for any run found in the store.
      if (!(error instanceof InvalidArgumentError) || error.argument !== "runId" || !(await store.latest(d.runId))) throw error;
      return runOrResume(store, runner, workflow, d, signal);
    }
  }
  if (!isFinalStatus(checkpoint.status)) return runner.proceed(d.runId, workflow, { signal, ...traceContext });
  // Finished before its worker could report it.
  const context = checkpoint.snapshot.context as { terminal?: { result: unknown }; error?: ErrorJSON };
  if (context.error) throw reviveError(context.error);
  return { status: "done", runId: d.runId, result: context.terminal?.result };
}
