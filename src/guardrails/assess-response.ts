/**
 * A model response as the workflow machine and the proxy judge it: `validateResponse` (shared with the
 * Guardrails facade and the proxy) behind two limits that keep one response from flooding the
 * loop — at most `maxToolCallsPerResponse` calls (10,000 calls would otherwise each be
 * validated, recorded and answered), and arguments nested at most MAX_ARGS_DEPTH deep (deeper
 * ones overflow recursive JSON code once they are in the history). Both answer with a retry
 * nudge the model can act on, counted against the retry budget. Pure.
 */
import type { LLMResponse } from "../core/llm.js";
import { jsonIssue } from "../core/json-value.js";
import { argsTooDeepNudge, tooManyCallsNudge } from "./nudges.js";
import { validateResponse, type ValidationResult, type ValidatorTools } from "./response-validator.js";

/** Calls one response may carry unless configured otherwise. */
export const DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE = 64;

export interface AssessOptions {
  rescueEnabled: boolean;
  /** Names for the nudges (the tools on offer). */
  toolNames: readonly string[];
  /** Default DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE. */
  maxToolCalls?: number | undefined;
}

/** Deepest argument nesting a call may have (real tool arguments rarely pass 10). */
export const MAX_ARGS_DEPTH = 256;

/**
 * @example
 * assessResponse(response, { rescueEnabled: true, toolNames: workflow.toolNames }, workflow.tools); // { kind: "calls" | "retry" | "rejected", ... }
 */
export function assessResponse(response: LLMResponse, options: AssessOptions, tools: ValidatorTools): ValidationResult {
  const max = options.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE;
  const raw = response.type === "text" ? response.content : "";
  // Checked before validation: the point is not to validate thousands of calls.
  if (response.type === "tool_calls" && response.toolCalls.length > max) {
    return { kind: "retry", nudge: tooManyCallsNudge(response.toolCalls.length, max, options.toolNames), raw };
  }
  const validation = validateResponse(response, { tools, rescueEnabled: options.rescueEnabled });
  if (validation.kind === "retry") return validation;
  // Calls rescued from text are only known after validation.
  if (validation.calls.length > max) {
    return { kind: "retry", nudge: tooManyCallsNudge(validation.calls.length, max, options.toolNames), raw };
  }
  const deep = validation.calls.find((c) => jsonIssue(c.args, MAX_ARGS_DEPTH) !== undefined);
  if (deep) return { kind: "retry", nudge: argsTooDeepNudge(deep.tool, MAX_ARGS_DEPTH), raw };
  return validation;
}
