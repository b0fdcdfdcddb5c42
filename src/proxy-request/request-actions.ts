/**
 * The proxy-request machine's guards (is the verdict's budget spent, is it a policy block) and
 * actions (record the answer, the retry, the exhaustion or the policy failure) over a verdict.
 */
import type { LLMResponse } from "../core/llm.js";
import type { Budget, ProxyContext } from "./request-context.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE } from "../guardrails/assess-response.js";
import { handedOn } from "./handed-on.js";
import type { Exhaustion } from "./proxy-request.js";
import { passThroughAnswer } from "./verdict.js";

/** The record of one backend answer: usage summed over attempts. */
export function recordResponse(ctx: ProxyContext, response: LLMResponse): Partial<ProxyContext> {
  const usage = response.usage
    ? { inputTokens: ctx.usage.inputTokens + response.usage.inputTokens, outputTokens: ctx.usage.outputTokens + response.usage.outputTokens }
    : ctx.usage;
  return { lastResponse: response, attempts: ctx.attempts + 1, usage };
}

function budgetLimit(ctx: ProxyContext, budget: Budget): number {
  switch (budget) {
    case "retries":
      return ctx.options.maxRetries;
    case "toolErrors":
      return ctx.options.maxToolErrors;
    case "premature":
      return ctx.options.policy?.maxPrematureAttempts ?? 0;
    case "prereq":
      return ctx.options.policy?.maxPrereqViolations ?? 0;
  }
}

/** One more failure on the verdict's budget would exceed it. */
export function isBudgetSpent(ctx: ProxyContext): boolean {
  const v = ctx.verdict;
  if (v?.kind !== "retry") return false;
  return ctx.counters[v.budget] + 1 > budgetLimit(ctx, v.budget);
}

/**
 * A policy block whose budget ran out fails the request: handing the blocked call to the
 * caller would run exactly what the policy forbids.
 */
export function isPolicyBlock(ctx: ProxyContext): boolean {
  const v = ctx.verdict;
  return v?.kind === "retry" && (v.blocked === "step" || v.blocked === "prerequisite" || v.blocked === "loop_break");
}

/** The failure a spent policy budget ends the request with (HTTP 422, nothing returned to run). */
export function recordPolicyFailure(ctx: ProxyContext): Partial<ProxyContext> {
  const v = ctx.verdict;
  if (v?.kind !== "retry") throw new Error("recordPolicyFailure needs a retry verdict");
  const message = `forge policy: the model kept making calls the workflow policy forbids (${v.blocked}, ${ctx.counters[v.budget] + 1} attempt(s)); no call was returned. Last: ${v.lastError}`;
  return { error: { name: "HttpError", message, statusCode: 422 } };
}

/** Count the failure and append the attempt and its nudge for the next inference. */
export function recordRetry(ctx: ProxyContext): Partial<ProxyContext> {
  const v = ctx.verdict;
  if (v?.kind !== "retry") throw new Error("recordRetry needs a retry verdict");
  // Every failure inside one request is consecutive: the first usable answer ends the request.
  const counters = { ...ctx.counters, [v.budget]: ctx.counters[v.budget] + 1 };
  return { counters, messages: [...ctx.messages, ...v.appended] };
}

/**
 * Retries ran out: the caller gets the last answer, marked exhausted — but only the calls it may
 * be handed (tools the request offered, within the per-answer limit: handed-on.ts).
 */
export function recordExhausted(ctx: ProxyContext): Partial<ProxyContext> {
  const v = ctx.verdict;
  if (v?.kind !== "retry" || !ctx.lastResponse) throw new Error("recordExhausted needs a retry verdict");
  const { answer, dropped } = handedOn(passThroughAnswer(ctx.lastResponse, ctx), ctx.request.tools.map((t) => t.name), DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE);
  const exhausted: Exhaustion = { reason: v.budget === "toolErrors" ? "tool_errors" : "retries", attempts: ctx.attempts, lastError: v.lastError };
  if (dropped !== undefined) exhausted.dropped = dropped;
  return { answer, exhausted };
}

/** Accept the verdict's answer. */
export function recordAnswer(ctx: ProxyContext): Partial<ProxyContext> {
  const v = ctx.verdict;
  if (v?.kind !== "answer") throw new Error("recordAnswer needs an answer verdict");
  return { answer: v.answer, rescued: ctx.rescued || v.rescued };
}
