/**
 * The model's response as the machine judges it: `validateResponse` (shared with the
 * Guardrails facade and the proxy) behind two limits that keep one response from flooding the
 * loop — at most `maxToolCallsPerResponse` calls (10,000 calls would otherwise each be
 * validated, recorded and answered), and arguments nested at most MAX_ARGS_DEPTH deep (deeper
 * ones overflow recursive JSON code once they are in the history). Both answer with a retry
 * nudge the model can act on, counted against the retry budget. Pure.
 */
import type { LLMResponse } from "../core/llm.js";
import { jsonIssue } from "../core/messages.js";
import type { AnyToolDef } from "../core/tool.js";
import { argsTooDeepNudge, tooManyCallsNudge } from "../guardrails/nudges.js";
import { validateResponse, type ValidationResult } from "../guardrails/response-validator.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE, type WorkflowContext } from "./context.js";

/** Deepest argument nesting a call may have (real tool arguments rarely pass 10). */
export const MAX_ARGS_DEPTH = 256;

/**
 * @example
 * assessResponse(response, context, workflow.tools); // { kind: "calls" | "retry" | "rejected", ... }
 */
export function assessResponse(
  response: LLMResponse,
  ctx: Pick<WorkflowContext, "budget" | "switches" | "toolNames">,
  tools: Readonly<Record<string, AnyToolDef>>,
): ValidationResult {
  const max = ctx.budget.maxToolCallsPerResponse ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE;
  const raw = response.type === "text" ? response.content : "";
  // Checked before validation: the point is not to validate thousands of calls.
  if (response.type === "tool_calls" && response.toolCalls.length > max) {
    return { kind: "retry", nudge: tooManyCallsNudge(response.toolCalls.length, max, ctx.toolNames), raw };
  }
  const validation = validateResponse(response, { tools, rescueEnabled: ctx.switches.rescueEnabled });
  if (validation.kind === "retry") return validation;
  // Calls rescued from text are only known after validation.
  if (validation.calls.length > max) {
    return { kind: "retry", nudge: tooManyCallsNudge(validation.calls.length, max, ctx.toolNames), raw };
  }
  const deep = validation.calls.find((c) => jsonIssue(c.args, MAX_ARGS_DEPTH) !== undefined);
  if (deep) return { kind: "retry", nudge: argsTooDeepNudge(deep.tool, MAX_ARGS_DEPTH), raw };
  return validation;
}
