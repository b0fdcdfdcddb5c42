/**
 * What the proxy-request machine emits when a guardrail steps in: a rescue (calls recovered
 * from the model's text, by format), a nudge sent back to the model (by kind), a budget that
 * ran out. The HTTP side turns them into span events and Prometheus counts; the machine only
 * names them. Pure functions of the context, like the machine's other actions.
 */
import type { Budget, NudgeKind, ProxyContext } from "./request-context.js";

/** A budget as the `kind` label of forge_budgets_exhausted_total reads it. */
export type ExhaustedBudget = "retries" | "tool_errors" | "steps" | "prerequisites";

export type ProxyGuardrailEvent =
  | { type: "guardrail.rescue"; format: string; attempt: number }
  | { type: "guardrail.nudge"; kind: NudgeKind; attempt: number; reason: string }
  | { type: "guardrail.exhausted"; budget: ExhaustedBudget; attempt: number };

const BUDGET_LABEL: Record<Budget, ExhaustedBudget> = { retries: "retries", toolErrors: "tool_errors", premature: "steps", prereq: "prerequisites" };

/**
 * The rescue the last judgement made, if any.
 *
 * @example
 * rescueEvent(ctx); // { type: "guardrail.rescue", format: "hermes", attempt: 1 } or undefined
 */
export function rescueEvent(ctx: ProxyContext): ProxyGuardrailEvent | undefined {
  const rescue = ctx.verdict?.rescue;
  return rescue === undefined ? undefined : { type: "guardrail.rescue", format: rescue, attempt: ctx.attempts };
}

/**
 * The nudge a retry verdict sends back to the model.
 *
 * @example
 * nudgeEvent(ctx); // { type: "guardrail.nudge", kind: "unknown_tool", attempt: 1, reason: "..." }
 */
export function nudgeEvent(ctx: ProxyContext): ProxyGuardrailEvent {
  const v = ctx.verdict;
  if (v?.kind !== "retry") throw new Error("nudgeEvent needs a retry verdict");
  return { type: "guardrail.nudge", kind: v.nudge, attempt: ctx.attempts, reason: v.lastError };
}

/**
 * The budget a retry verdict found spent.
 *
 * @example
 * exhaustedEvent(ctx); // { type: "guardrail.exhausted", budget: "retries", attempt: 4 }
 */
export function exhaustedEvent(ctx: ProxyContext): ProxyGuardrailEvent {
  const v = ctx.verdict;
  if (v?.kind !== "retry") throw new Error("exhaustedEvent needs a retry verdict");
  return { type: "guardrail.exhausted", budget: BUDGET_LABEL[v.budget], attempt: ctx.attempts };
}
