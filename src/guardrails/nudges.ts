/**
 * Corrective texts fed back to the model, in our own wording. Two channels (seed 001):
 * bare-text retries go on the USER channel; everything about a specific call (unknown tool,
 * bad arguments, premature terminal, prerequisites, loop break, tool failures) goes on the
 * TOOL channel as a result anchored to the call id, starting with a bracketed marker so
 * models trained on tool-error replies recognise it and compaction/metrics can classify it.
 */
import { describeError, safeString } from "../core/errors.js";
import { formatArgIssues, type ArgIssue } from "../core/tool.js";

export type NudgeKind =
  | "retry"
  | "unknown_tool"
  | "invalid_args"
  | "step"
  | "prerequisite"
  | "loop_break"
  | "batch_skipped"
  | "too_many_calls"
  | "args_too_deep"
  | "format";

/** A corrective message. `tier` is the escalation level (step nudges 1..3; 0 when it does not escalate). */
export interface Nudge {
  role: "user" | "tool";
  content: string;
  kind: NudgeKind;
  tier: number;
}

/** Every bracketed marker this module emits. */
export const TOOL_ERROR_MARKERS = [
  "UnknownTool",
  "InvalidArguments",
  "StepEnforcementError",
  "PrereqError",
  "LoopBreak",
  "ToolError",
  "ToolResolutionError",
  "Skipped",
  "Rejected",
] as const;

const MARKER = new RegExp(`^\\[(?:${TOOL_ERROR_MARKERS.join("|")})\\]`);

const quoteList = (names: readonly string[]): string =>
  names.length === 0 ? "(none)" : names.map((n) => `"${n}"`).join(", ");

/**
 * What the model is told about a thrown value. Never throws itself: a tool may throw anything,
 * including objects whose `toString` or `message` getter throws.
 */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return safeString(error);
  try {
    const message: unknown = error.message;
    return typeof message === "string" ? message : safeString(message);
  } catch {
    return describeError(error);
  }
}

/**
 * User-channel nudge after a reply that carried no usable tool call.
 *
 * @example
 * retryNudge("The weather is nice.", ["get_weather", "respond"]).content;
 */
export function retryNudge(rawText: string, toolNames: readonly string[]): Nudge {
  const what = rawText.trim().length === 0 ? "Your last reply contained no tool call." : "Your last reply was plain text, not a tool call.";
  return {
    role: "user",
    kind: "retry",
    tier: 0,
    content:
      `${what} In this conversation you act only through tools. ` +
      `Reply with a tool call to one of: ${quoteList(toolNames)}, with its arguments as a JSON object.`,
  };
}

/**
 * User-channel nudge after a reply with more tool calls than one reply may carry; none of them ran.
 *
 * @example
 * tooManyCallsNudge(500, 64, ["search"]).content;
 */
export function tooManyCallsNudge(count: number, max: number, toolNames: readonly string[]): Nudge {
  return {
    role: "user",
    kind: "too_many_calls",
    tier: 0,
    content:
      `Your last reply made ${count} tool calls; at most ${max} are allowed in one reply, so none of them ran. ` +
      `Make at most ${max} calls to ${quoteList(toolNames)} (usually one), then wait for the results.`,
  };
}

/**
 * User-channel nudge after a call whose arguments were nested too deeply to store or validate.
 *
 * @example
 * argsTooDeepNudge("search", 256).content;
 */
export function argsTooDeepNudge(tool: string, maxDepth: number): Nudge {
  return {
    role: "user",
    kind: "args_too_deep",
    tier: 0,
    content:
      `The arguments of your call to "${tool}" were nested more than ${maxDepth} levels deep, so nothing ran. ` +
      `Call "${tool}" again with flat JSON arguments matching its parameters.`,
  };
}

/**
 * User-channel nudge after a final answer that is not the JSON the caller asked for
 * (`response_format`); names every failing path.
 *
 * @example
 * formatNudge("a JSON object matching the schema \"weather\"", ["temp: must be number"]).content;
 */
export function formatNudge(wanted: string, issues: readonly string[]): Nudge {
  return {
    role: "user",
    kind: "format",
    tier: 0,
    content:
      `Your last reply was not valid for the required output format:\n${issues.map((i) => `- ${i}`).join("\n")}\n` +
      `Reply again with only ${wanted}: no prose and no code fences around it.`,
  };
}

/**
 * A person declined the call: it did not run; the reason is theirs.
 *
 * @example
 * rejectedMessage("refund", "over the limit"); // '[Rejected] A person declined the call to "refund": over the limit. ...'
 */
export function rejectedMessage(tool: string, reason: string): string {
  return `[Rejected] A person declined the call to "${tool}": ${reason}. It did not run. Do not repeat it unchanged; adjust it to the reason or take another way.`;
}

/**
 * @example
 * unknownToolMessage("get_forecast", ["get_weather"]); // '[UnknownTool] There is no tool named "get_forecast". ...'
 */
export function unknownToolMessage(tool: string, toolNames: readonly string[]): string {
  return `[UnknownTool] There is no tool named "${tool}". Available tools: ${quoteList(toolNames)}. Call one of these instead.`;
}

/**
 * Names every failing field and what is wrong with it.
 *
 * @example
 * invalidArgsMessage("get_weather", [{ path: "city", message: "expected string, received number" }]);
 */
export function invalidArgsMessage(tool: string, issues: readonly ArgIssue[]): string {
  return `[InvalidArguments] ${formatArgIssues(tool, issues)}\nFix the listed fields and call "${tool}" again.`;
}

/**
 * @example
 * nonObjectArgsMessage("get_weather", "Paris"); // '[InvalidArguments] Arguments for "get_weather" must be a JSON object ...'
 */
export function nonObjectArgsMessage(tool: string, args: unknown): string {
  const got = args === null ? "null" : Array.isArray(args) ? "an array" : typeof args === "string" ? "a string that is not a JSON object" : `a ${typeof args}`;
  return `[InvalidArguments] Arguments for "${tool}" must be a JSON object mapping parameter names to values; got ${got}.`;
}

/**
 * Premature terminal call. Firmness grows with the tier; every tier names the next pending step.
 *
 * @example
 * stepNudgeMessage("answer", ["search", "summarize"], 2);
 */
export function stepNudgeMessage(terminalTool: string, pending: readonly string[], tier: 1 | 2 | 3): string {
  const next = pending[0] ?? "(none)";
  const list = quoteList(pending);
  switch (tier) {
    case 1:
      return `[StepEnforcementError] "${terminalTool}" cannot run yet: required steps are still pending (${list}). Call "${next}" next.`;
    case 2:
      return `[StepEnforcementError] Blocked again: "${terminalTool}" stays unavailable until every required step has succeeded. Pending: ${list}. Your next call must be "${next}".`;
    case 3:
      return `[StepEnforcementError] Last warning: one more early "${terminalTool}" call ends this run as a failure. Call "${next}" now; still pending: ${list}.`;
  }
}

/**
 * @example
 * prerequisiteMessage("edit_file", ['read_file(path="a.txt")']);
 */
export function prerequisiteMessage(tool: string, missing: readonly string[]): string {
  return `[PrereqError] "${tool}" needs these calls to succeed first: ${missing.join(", ")}. Make them, then call "${tool}" again.`;
}

/**
 * @example
 * loopBreakMessage("search", 3);
 */
export function loopBreakMessage(tool: string, count: number): string {
  return `[LoopBreak] "${tool}" has already run ${count} time(s) with exactly these arguments, so it was not run again. Use different arguments or move on to the next step.`;
}

/**
 * A tool threw; counted against the tool-error budget.
 *
 * @example
 * toolErrorMessage("search", new Error("timeout")); // "[ToolError] search: timeout"
 */
export function toolErrorMessage(tool: string, error: unknown): string {
  return `[ToolError] ${tool}: ${errorText(error)}`;
}

/**
 * A tool threw ToolResolutionError: the arguments were fine but the data did not resolve. Not counted.
 *
 * @example
 * toolResolutionMessage("lookup", new Error("no order 42")); // "[ToolResolutionError] lookup: no order 42"
 */
export function toolResolutionMessage(tool: string, error: unknown): string {
  return `[ToolResolutionError] ${tool}: ${errorText(error)}`;
}

/**
 * For the valid calls of a batch that was blocked because of another call.
 *
 * @example
 * batchSkippedMessage("search");
 */
export function batchSkippedMessage(tool: string): string {
  return `[Skipped] "${tool}" was not run because another call in the same batch was rejected. Fix that call, then make this one again.`;
}

/**
 * True for contents produced by any tool-channel function above.
 *
 * @example
 * isToolErrorContent("[PrereqError] ..."); // true
 */
export function isToolErrorContent(content: string): boolean {
  return MARKER.test(content);
}
