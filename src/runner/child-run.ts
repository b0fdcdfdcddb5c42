/**
 * A workflow run by another run's tool call (`ToolExecuteContext.runChild`, `workflowTool`):
 * a run of its own in the caller's store, on a fresh runner with the caller's settings and the
 * caller's remaining budgets, cancelled with the call's signal.
 *
 * Restore semantics, each a choice:
 * - The child's id is derived from the call (child-links.ts). A call that runs again — the
 *   calling run resumed after a crash or a stop, retried after a cancel — finds its child in the
 *   store and never starts it again: an active or waiting child is continued (`proceed`: its
 *   recorded tool outcomes answer its in-flight call), a finished one answers from its last
 *   checkpoint (its result, or its error), a cancelled one — cancelled with the calling run —
 *   is retried from its state before the cancel.
 * - A killed process leaves the child's lease behind: the call waits for it to lapse (the old
 *   holder of the calling run loses its own lease first, which stops its child).
 * - Budgets are bounded, not charged: the child gets what the calling run has left (model
 *   calls, tokens, wall clock) when it starts, fixed in its own state from then on; what it
 *   uses is not added to the calling run's totals.
 * - A child that waits for a person (no `onHumanRequest` answers it) is not waited for: the
 *   call fails with ChildWorkflowError("waiting") naming the child run to decide.
 */
import type { Context } from "@opentelemetry/api";
import { ChildWorkflowError, describeError, ForgeError, InvalidArgumentError, reviveError, type RunLockedError, type RunWaitingError } from "../core/errors.js";
import type { ChildRunOptions } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";
import type { WorkflowContext } from "../loop/context.js";
import type { HumanRequest } from "../loop/human.js";
import { isFinalStatus, type Checkpoint, type RunStore } from "../persistence/run-store.js";
import { childRunId, parentLinkOf } from "./child-links.js";
import { assertWorkflow, type ResumeOptions, type RunOptions, type WorkflowRunnerOptions } from "./options.js";
import { WorkflowState } from "../loop/state-name.js";

/** The tool call that runs the child. */
export interface ChildCall {
  /** The calling run. */
  runId: string;
  callId: string;
  iteration: number;
  index: number;
  /** The call's signal: aborted when the calling run is cancelled or stopped, or the call times out. */
  signal: AbortSignal;
  /** The call's `execute_tool` span context: the child's run span is its child. */
  traceContext?: Context;
}

type ChildOutcome = { status: "done"; runId: string; result: unknown } | { status: "waiting"; runId: string; requests: HumanRequest[] };

/** What of a WorkflowRunner a child run uses (a fresh one per child). */
export interface ChildRunner {
  start(workflow: Workflow, message: string, options: RunOptions): Promise<ChildOutcome>;
  proceed(runId: string, workflow: Workflow, options: ResumeOptions): Promise<ChildOutcome>;
  retry(runId: string, workflow: Workflow, options: ResumeOptions): Promise<unknown>;
}

/** The calling run as the child sees it. */
export interface CallingRun {
  options: Readonly<WorkflowRunnerOptions>;
  /** Its context during the call (budgets, iterations and tokens used, start). */
  context: Readonly<WorkflowContext>;
  now: number;
  /** A fresh runner with these options (injected: runner.ts builds WorkflowRunners). */
  runner: (options: WorkflowRunnerOptions) => ChildRunner;
}

/**
 * Run `workflow` on `message` as the child of `call`, or continue / answer the child it
 * already started; resolves with its result, rejects with ChildWorkflowError (or, when the call
 * was cut off, with the child's cancellation).
 */
export async function runChildWorkflow(caller: CallingRun, call: ChildCall, workflow: Workflow, message: string, options: ChildRunOptions = {}): Promise<unknown> {
  assertWorkflow(workflow);
  if (typeof message !== "string") throw new InvalidArgumentError("message", "expected the child workflow's user message as a string");
  const runId = childRunId(call.runId, call.iteration, call.index);
  if (!runId) throw new InvalidArgumentError("runId", `run ${call.runId}'s id is too long to name its child runs (<runId>.<iteration>-<index> must fit in 128 characters)`);
  const store = caller.options.store;
  try {
    const existing = store ? await store.latest(runId) : undefined;
    if (existing) return await continued(caller, call, store!, existing, workflow);
    const runner = caller.runner({ ...caller.options, ...remainingBudgets(caller, workflow.name, runId) });
    const start: RunOptions = {
      runId,
      signal: call.signal,
      parent: { runId: call.runId, callId: call.callId },
      ...(options.promptVars ? { promptVars: options.promptVars } : {}),
      ...(call.traceContext ? { traceContext: call.traceContext } : {}),
    };
    return resultOf(await afterLease(call.signal, () => runner.start(workflow, message, start)), workflow.name);
  } catch (error) {
    throw childError(error, workflow.name, runId, call.signal);
  }
}

/** The child the call already started: continued, retried or answered from its checkpoint. */
async function continued(caller: CallingRun, call: ChildCall, store: RunStore, last: Checkpoint, workflow: Workflow): Promise<unknown> {
  const { runId } = last;
  const parent = parentLinkOf(await store.events(runId));
  if (parent?.runId !== call.runId || parent.callId !== call.callId) {
    throw new InvalidArgumentError("runId", `run ${runId} exists in the store but was not started by call ${call.callId} of run ${call.runId}; it cannot be this call's child`);
  }
  const runner = caller.runner(caller.options);
  const signal = { signal: call.signal, ...(call.traceContext ? { traceContext: call.traceContext } : {}) };
  if (!isFinalStatus(last.status)) return resultOf(await afterLease(call.signal, () => runner.proceed(runId, workflow, signal)), workflow.name);
  const ctx = last.snapshot.context as WorkflowContext;
  if (last.state === WorkflowState.done) return ctx.terminal?.result;
  if (last.state === WorkflowState.cancelled) return await afterLease(call.signal, () => runner.retry(runId, workflow, signal));
  throw ctx.error ? reviveError(ctx.error) : new Error(`run ${runId} ended in state "${last.state}" without an error`);
}

/** What the calling run has left, as the child's budgets; ChildWorkflowError("no_budget") when something ran out. */
function remainingBudgets(caller: CallingRun, workflow: string, runId: string): Pick<WorkflowRunnerOptions, "maxIterations" | "maxTotalTokens" | "maxWallClockMs"> {
  const { run, iteration, usage } = caller.context;
  const { maxIterations, maxTotalTokens, maxWallClockMs } = run.budget;
  const spent = (what: string) => new ChildWorkflowError(workflow, runId, "no_budget", `the calling run ${run.id} has no ${what} left`);
  const iterations = maxIterations - iteration;
  if (iterations < 1) throw spent(`model calls (maxIterations ${maxIterations})`);
  const budgets: ReturnType<typeof remainingBudgets> = { maxIterations: iterations };
  if (maxTotalTokens !== undefined) {
    const tokens = maxTotalTokens - usage.inputTokens - usage.outputTokens;
    if (tokens <= 0) throw spent(`tokens (maxTotalTokens ${maxTotalTokens})`);
    budgets.maxTotalTokens = tokens;
  }
  if (maxWallClockMs !== undefined) {
    const ms = run.startedAt + maxWallClockMs - caller.now;
    if (ms <= 0) throw spent(`time (maxWallClockMs ${maxWallClockMs})`);
    budgets.maxWallClockMs = ms;
  }
  return budgets;
}

function resultOf(outcome: ChildOutcome, workflow: string): unknown {
  if (outcome.status === "done") return outcome.result;
  throw waiting(workflow, outcome.runId, outcome.requests);
}

function waiting(workflow: string, runId: string, requests: readonly Pick<HumanRequest, "kind" | "tool" | "callId">[]): ChildWorkflowError {
  const asked = requests.map((r) => `${r.kind} of ${r.tool} (call ${r.callId})`).join(", ");
  return new ChildWorkflowError(workflow, runId, "waiting", `${asked}; decide with "forge-ts runs approve|reject|answer ${runId}", then resume it`);
}

/**
 * `attempt`, again after the child's lease lapses while another holder has it: a process
 * killed while it drove the child left it behind. Ends when the call's signal is aborted.
 */
async function afterLease<T>(signal: AbortSignal, attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isCode(error, "FORGE_RUN_LOCKED") || signal.aborted) throw error;
      await abortableDelay(Math.max(0, (error as RunLockedError).expiresInMs) + 10, signal);
    }
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      if (signal.aborted) reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      else resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The error the call fails with: the child's, as a ChildWorkflowError; a cut-off call's as it is (the service records no outcome for it). */
function childError(error: unknown, workflow: string, runId: string, signal: AbortSignal): unknown {
  if (signal.aborted || isCode(error, "FORGE_CHILD_WORKFLOW")) return error;
  if (isCode(error, "FORGE_RUN_WAITING")) return waiting(workflow, runId, (error as RunWaitingError).requests);
  const code = ForgeError.isInstance(error) ? error.code : undefined;
  return new ChildWorkflowError(workflow, runId, "failed", describeError(error), code, { cause: error });
}

const isCode = (error: unknown, code: string): error is ForgeError => ForgeError.isInstance(error) && error.code === code;
