/**
 * The workflow machine's guards: one-line predicates over the JSON context. Each delegates
 * to a guardrail function so the foreign-loop facade and the machine decide identically.
 */
import { ForgeError, type ToolResultError } from "../core/errors.js";
import { isExhausted } from "../guardrails/budget.js";
import { findRepeatViolations } from "../guardrails/loop-break.js";
import { rejectionBudget } from "../guardrails/response-validator.js";
import { findPrematureTerminal, findPrerequisiteViolations } from "../guardrails/step-enforcer.js";
import type { ValidatedCall } from "../guardrails/response-validator.js";
import type { Prerequisite } from "../core/tool.js";
import { callKeysOf, countsOf } from "./call-counts.js";
import type { WorkflowContext } from "./context.js";

export const totalTokens = (ctx: WorkflowContext): number => ctx.usage.inputTokens + ctx.usage.outputTokens;

export const isIterationBudgetExhausted = (ctx: WorkflowContext): boolean => ctx.iteration >= ctx.run.budget.maxIterations;

export const isTokenBudgetExhausted = (ctx: WorkflowContext): boolean =>
  ctx.run.budget.maxTotalTokens !== undefined && totalTokens(ctx) >= ctx.run.budget.maxTotalTokens;

export const isWallClockExhausted = (ctx: WorkflowContext): boolean => isWallClockExhaustedAt(ctx, ctx.now);

/** The wall-clock budget at `now` (a service's or the runner's timer's clock). */
export const isWallClockExhaustedAt = (ctx: WorkflowContext, now: number): boolean =>
  ctx.run.budget.maxWallClockMs !== undefined && now - ctx.run.startedAt >= ctx.run.budget.maxWallClockMs;

/**
 * The history's running total is at or under the compaction trigger, so the compaction service
 * would return it unchanged. Never true when `compactAt` is null (a custom estimator decides).
 */
export const fitsContext = (ctx: WorkflowContext): boolean => ctx.run.compactAt !== null && ctx.historyTokens <= ctx.run.compactAt;

export const needsRetry = (ctx: WorkflowContext): boolean => ctx.validation?.kind === "retry";

/** A rejected batch with an unknown tool (or too many calls) draws on the retry budget. */
export const isRejectedOnRetries = (ctx: WorkflowContext): boolean =>
  ctx.validation?.kind === "rejected" && rejectionBudget(ctx.validation.rejections) === "retries";

/** A rejected batch with bad arguments (no unknown tool) draws on the tool-error budget. */
export const isRejectedOnToolErrors = (ctx: WorkflowContext): boolean =>
  ctx.validation?.kind === "rejected" && rejectionBudget(ctx.validation.rejections) === "toolErrors";

/** The failure being handled now would be one more than the retry budget allows. */
export const isRetryBudgetExhausted = (ctx: WorkflowContext): boolean => isExhausted(ctx.counters.retries + 1, ctx.run.budget.maxRetries);

/** One more tool error (bad args, loop break) than the budget allows. */
export const isNextToolErrorFatal = (ctx: WorkflowContext): boolean => isExhausted(ctx.counters.toolErrors + 1, ctx.run.budget.maxToolErrors);

export function validatedCalls(ctx: WorkflowContext): ValidatedCall[] {
  return ctx.validation?.kind === "calls" ? ctx.validation.calls : [];
}

export function prematureTerminal(ctx: WorkflowContext) {
  if (!ctx.run.switches.stepEnforcement) return null;
  return findPrematureTerminal(validatedCalls(ctx), ctx.run.terminalTools, ctx.steps.required, ctx.steps.completed);
}

export const hasPrematureTerminal = (ctx: WorkflowContext): boolean => prematureTerminal(ctx) !== null;

export const isPrematureBudgetExhausted = (ctx: WorkflowContext): boolean =>
  isExhausted(ctx.counters.premature + 1, ctx.run.budget.maxPremature);

/** `ctx.run.prerequisites` in the shape findPrerequisiteViolations reads, built once per run's record. */
const prerequisiteTools = new WeakMap<Record<string, Prerequisite[]>, Record<string, { prerequisites: Prerequisite[] }>>();

export function prerequisiteViolations(ctx: WorkflowContext) {
  if (!ctx.run.switches.stepEnforcement) return [];
  let tools = prerequisiteTools.get(ctx.run.prerequisites);
  if (!tools) {
    tools = Object.fromEntries(Object.entries(ctx.run.prerequisites).map(([name, prerequisites]) => [name, { prerequisites }]));
    prerequisiteTools.set(ctx.run.prerequisites, tools);
  }
  return findPrerequisiteViolations(validatedCalls(ctx), tools, ctx.steps.completed);
}

export const hasPrereqViolation = (ctx: WorkflowContext): boolean => prerequisiteViolations(ctx).length > 0;

export const isPrereqBudgetExhausted = (ctx: WorkflowContext): boolean => isExhausted(ctx.counters.prereq + 1, ctx.run.budget.maxPrereq);

/** Loop-break check of the batch: its own calls are looked up in the run's counts, nothing is copied. */
export function repeatViolations(ctx: WorkflowContext) {
  const calls = validatedCalls(ctx);
  if (calls.length === 0) return [];
  const keys = callKeysOf(calls);
  return findRepeatViolations(calls, countsOf(ctx.callCounts, keys), ctx.run.budget.maxToolRepeat, keys);
}

export const hasRepeatViolation = (ctx: WorkflowContext): boolean => repeatViolations(ctx).length > 0;

export const isBatchComplete = (ctx: WorkflowContext): boolean =>
  ctx.batch !== undefined && ctx.batch.done.length >= ctx.batch.calls.length;

/** The call now running is the batch's last: once committed, the batch is complete. */
export const isLastCallOfBatch = (ctx: WorkflowContext): boolean =>
  ctx.batch !== undefined && ctx.batch.done.length + 1 >= ctx.batch.calls.length;

export const batchHadToolError = (ctx: WorkflowContext): boolean => ctx.batch?.done.some((r) => r.status === "error") ?? false;

export const isToolErrorBudgetExhausted = (ctx: WorkflowContext): boolean =>
  batchHadToolError(ctx) && isExhausted(ctx.counters.toolErrors + 1, ctx.run.budget.maxToolErrors);

export const hasTerminalResult = (ctx: WorkflowContext): boolean => ctx.terminal !== undefined;

/**
 * A tool error that ends the run instead of going back to the model: a terminal tool whose
 * result has no JSON form (the run could neither return nor persist it).
 */
export const isUnencodableTerminalResult = (error: unknown): boolean =>
  ForgeError.isInstance(error) && error.code === "FORGE_TOOL_RESULT" && (error as ToolResultError).terminal;
