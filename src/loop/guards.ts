/**
 * The workflow machine's guards: one-line predicates over the JSON context. Each delegates
 * to a guardrail function so the foreign-loop facade and the machine decide identically.
 */
import { ForgeError, type ToolResultError } from "../core/errors.js";
import { isExhausted } from "../guardrails/error-tracker.js";
import { findRepeatViolations } from "../guardrails/loop-break.js";
import { rejectionBudget } from "../guardrails/response-validator.js";
import { findPrematureTerminal, findPrerequisiteViolations } from "../guardrails/step-enforcer.js";
import type { ValidatedCall } from "../guardrails/response-validator.js";
import type { WorkflowContext } from "./context.js";

export const totalTokens = (ctx: WorkflowContext): number => ctx.usage.inputTokens + ctx.usage.outputTokens;

export const isIterationBudgetExhausted = (ctx: WorkflowContext): boolean => ctx.iteration >= ctx.budget.maxIterations;

export const isTokenBudgetExhausted = (ctx: WorkflowContext): boolean =>
  ctx.budget.maxTotalTokens !== undefined && totalTokens(ctx) >= ctx.budget.maxTotalTokens;

export const isWallClockExhausted = (ctx: WorkflowContext): boolean =>
  ctx.budget.maxWallClockMs !== undefined && ctx.now - ctx.startedAt >= ctx.budget.maxWallClockMs;

export const needsRetry = (ctx: WorkflowContext): boolean => ctx.validation?.kind === "retry";

export const isBatchRejected = (ctx: WorkflowContext): boolean => ctx.validation?.kind === "rejected";

/** A rejected batch with bad arguments (no unknown tool) draws on the tool-error budget. */
export const isRejectedOnToolErrors = (ctx: WorkflowContext): boolean =>
  ctx.validation?.kind === "rejected" && rejectionBudget(ctx.validation.rejections) === "toolErrors";

/** The failure being handled now would be one more than the retry budget allows. */
export const isRetryBudgetExhausted = (ctx: WorkflowContext): boolean => isExhausted(ctx.counters.retries + 1, ctx.budget.maxRetries);

/** One more tool error (bad args, loop break) than the budget allows. */
export const isNextToolErrorFatal = (ctx: WorkflowContext): boolean => isExhausted(ctx.counters.toolErrors + 1, ctx.budget.maxToolErrors);

export function validatedCalls(ctx: WorkflowContext): ValidatedCall[] {
  return ctx.validation?.kind === "calls" ? ctx.validation.calls : [];
}

export function prematureTerminal(ctx: WorkflowContext) {
  if (!ctx.switches.stepEnforcement) return null;
  return findPrematureTerminal(validatedCalls(ctx), ctx.terminalTools, ctx.steps.required, ctx.steps.completed);
}

export const hasPrematureTerminal = (ctx: WorkflowContext): boolean => prematureTerminal(ctx) !== null;

export const isPrematureBudgetExhausted = (ctx: WorkflowContext): boolean =>
  isExhausted(ctx.counters.premature + 1, ctx.budget.maxPremature);

export function prerequisiteViolations(ctx: WorkflowContext) {
  if (!ctx.switches.stepEnforcement) return [];
  const tools = Object.fromEntries(Object.entries(ctx.prerequisites).map(([name, prerequisites]) => [name, { prerequisites }]));
  return findPrerequisiteViolations(validatedCalls(ctx), tools, ctx.steps.completed);
}

export const hasPrereqViolation = (ctx: WorkflowContext): boolean => prerequisiteViolations(ctx).length > 0;

export const isPrereqBudgetExhausted = (ctx: WorkflowContext): boolean => isExhausted(ctx.counters.prereq + 1, ctx.budget.maxPrereq);

export function repeatViolations(ctx: WorkflowContext) {
  return findRepeatViolations(validatedCalls(ctx), ctx.callCounts, ctx.budget.maxToolRepeat);
}

export const hasRepeatViolation = (ctx: WorkflowContext): boolean => repeatViolations(ctx).length > 0;

export const isBatchComplete = (ctx: WorkflowContext): boolean =>
  ctx.batch !== undefined && ctx.batch.done.length >= ctx.batch.calls.length;

export const batchHadToolError = (ctx: WorkflowContext): boolean => ctx.batch?.done.some((r) => r.status === "error") ?? false;

export const isToolErrorBudgetExhausted = (ctx: WorkflowContext): boolean =>
  batchHadToolError(ctx) && isExhausted(ctx.counters.toolErrors + 1, ctx.budget.maxToolErrors);

export const hasTerminalResult = (ctx: WorkflowContext): boolean => ctx.terminal !== undefined;

/**
 * A tool error that ends the run instead of going back to the model: a terminal tool whose
 * result has no JSON form (the run could neither return nor persist it).
 */
export const isFatalToolError = (error: unknown): boolean =>
  ForgeError.isInstance(error) && error.code === "FORGE_TOOL_RESULT" && (error as ToolResultError).terminal;
