/**
 * Typed errors for each way the loop can end badly, built from the context and stored in it
 * as JSON (`context.error`); the runner revives them into the error classes it throws.
 */
import {
  BudgetExhaustedError,
  HumanWaitTimeoutError,
  MaxIterationsError,
  PrerequisiteError,
  StepEnforcementError,
  ToolCallError,
  ToolExecutionError,
  WorkflowCancelledError,
  errorToJSON,
  type BudgetReason,
  type ErrorJSON,
} from "../core/errors.js";
import { loopBreakMessage } from "../guardrails/nudges.js";
import { pendingSteps } from "../guardrails/step-enforcer.js";
import type { WorkflowContext } from "./context.js";
import { prematureTerminal, prerequisiteViolations, repeatViolations, totalTokens } from "./guards.js";

type Failure = NonNullable<WorkflowContext["error"]>;
const loop = (error: { toJSON(): ErrorJSON }): Failure => ({ ...error.toJSON(), origin: "loop" });

const completedNames = (ctx: WorkflowContext): string[] => [...ctx.steps.completedTools];

export function retriesExhausted(ctx: WorkflowContext): Failure {
  const v = ctx.validation;
  const raw = ctx.lastResponse?.type === "text" ? ctx.lastResponse.content : JSON.stringify(ctx.lastResponse?.toolCalls ?? []);
  const lastError =
    v?.kind === "retry" ? v.nudge.content : v?.kind === "rejected" ? v.rejections.map((r) => r.message).join("\n") : undefined;
  const attempt = ctx.counters.retries + 1;
  return loop(
    new ToolCallError(`Model failed to produce a valid tool call after ${attempt} consecutive attempt(s)`, {
      rawResponse: raw,
      attempt,
      lastError,
    }),
  );
}

export function prematureExhausted(ctx: WorkflowContext): Failure {
  const p = prematureTerminal(ctx);
  return loop(new StepEnforcementError(p?.terminalTool ?? "", ctx.counters.premature + 1, p?.pending ?? []));
}

export function prereqExhausted(ctx: WorkflowContext): Failure {
  const v = prerequisiteViolations(ctx)[0];
  return loop(new PrerequisiteError(v?.tool ?? "", ctx.counters.prereq + 1, v?.missing ?? []));
}

/** Tool-error budget exceeded: by a failed batch, by rejected arguments, or by a loop break. */
export function toolErrorsExhausted(ctx: WorkflowContext): Failure {
  const attempts = ctx.counters.toolErrors + 1;
  const failed = [...(ctx.batch?.done ?? [])].reverse().find((r) => r.status === "error");
  if (failed) return loop(new ToolExecutionError(failed.tool, failed.content, attempts));
  if (ctx.validation?.kind === "rejected") {
    const r = ctx.validation.rejections.find((x) => x.kind === "invalid_args") ?? ctx.validation.rejections[0];
    return loop(new ToolExecutionError(r?.tool ?? "", r?.message ?? "", attempts));
  }
  const repeat = repeatViolations(ctx)[0];
  return loop(new ToolExecutionError(repeat?.tool ?? "", loopBreakMessage(repeat?.tool ?? "", repeat?.count ?? 0), attempts));
}

export function iterationsExhausted(ctx: WorkflowContext): Failure {
  return loop(new MaxIterationsError(ctx.iteration, completedNames(ctx), pendingSteps(ctx.steps.required, ctx.steps.completed)));
}

export function budgetExhausted(ctx: WorkflowContext, reason: BudgetReason): Failure {
  const used = reason === "token_budget" ? totalTokens(ctx) : ctx.now - ctx.run.startedAt;
  const limit = (reason === "token_budget" ? ctx.run.budget.maxTotalTokens : ctx.run.budget.maxWallClockMs) ?? 0;
  return loop(new BudgetExhaustedError(reason, used, limit, completedNames(ctx)));
}

export function cancelled(ctx: WorkflowContext, reason?: string): Failure {
  return loop(new WorkflowCancelledError(ctx.messages, completedNames(ctx), ctx.iteration, reason));
}

/** The wall clock ran out while a service was in flight (the runner's timer reported `now`). */
export function wallClockExhaustedAt(ctx: WorkflowContext, now: number): Failure {
  return budgetExhausted({ ...ctx, now }, "wall_clock");
}

/** A terminal tool's result has no JSON form: the run cannot return or persist it. */
export function terminalResultFailed(error: unknown): Failure {
  return { ...errorToJSON(error), origin: "loop" };
}

/** A service (inference, compaction) threw: keep its JSON and where it came from. */
export function serviceFailed(origin: "infer" | "compact", error: unknown): Failure {
  return { ...errorToJSON(error), origin };
}

/** A person did not decide in time and the run fails then (`onWaitTimeout: "fail"`). */
export function waitTimedOut(ctx: WorkflowContext, now: number): Failure {
  const pending = (ctx.batch?.human ?? []).filter((r) => r.decision === undefined);
  const oldest = Math.min(...pending.map((r) => r.askedAt));
  return loop(new HumanWaitTimeoutError(now - oldest, ctx.run.budget.maxWaitMs ?? 0, pending.map((r) => `${r.tool} (call ${r.callId})`)));
}
