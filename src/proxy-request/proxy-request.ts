/**
 * One client request in dialect-neutral form (both /v1/chat/completions and /v1/messages parse
 * into it) and what the proxy answers with. Plain JSON throughout: it is the proxy-request
 * machine's input and context.
 */
import type { ToolChoice, Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import type { ErrorRecord } from "./http-error.js";

export interface ProxyRequest {
  /** The caller's model name ("" when it sent none). */
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  toolChoice: ToolChoice | undefined;
  stream: boolean;
  /** OpenAI stream_options.include_usage (Anthropic streams always carry usage). */
  includeUsage: boolean;
  /** Sampling and unknown fields passed through to the backend, in OpenAI names. */
  body: Record<string, unknown>;
  /** The JSON the final answer must be (OpenAI `response_format`, Anthropic `output_format`). */
  format?: OutputFormat;
  /** Calls whose results the caller flagged as failed (Anthropic `is_error`). */
  failedCallIds?: string[];
  /**
   * Tools the caller sent that the backend is not offered (server tools it cannot run, tools
   * of a type the proxy cannot validate, unloaded deferred tools); the response names them in
   * `x-forge-omitted-tools`.
   */
  omittedTools?: string[];
}

/**
 * The tool guardrails apply: the request offers tools and does not forbid calling them.
 *
 * @example
 * toolsGuarded({ ...request, tools: [], toolChoice: undefined }); // false
 */
export function toolsGuarded(request: ProxyRequest): boolean {
  return request.tools.length > 0 && request.toolChoice !== "none";
}

/**
 * The answer is judged before the caller sees it (tool guardrails or an output format), so it
 * cannot stream live: the caller gets keep-alives, then the judged answer.
 *
 * @example
 * isJudged({ ...request, tools: [], format: { kind: "json_object" } }); // true
 */
export function isJudged(request: ProxyRequest): boolean {
  return toolsGuarded(request) || request.format !== undefined;
}

/**
 * How a streaming caller gets the answer's text: `live` as the backend sends it (nothing is
 * judged), `judged` prose released by the streaming judge while the machine judges the whole
 * answer, or `whole` after judgement — when any text may turn out wrong as a whole: a call is
 * required (`tool_choice` required or named), the answer must be JSON (`format`), or prose is
 * due through the injected respond tool.
 *
 * @example
 * releaseMode({ ...request, tools: [weather], toolChoice: "auto" }, false); // "judged"
 */
export function releaseMode(request: ProxyRequest, injectRespondTool: boolean): "live" | "judged" | "whole" {
  if (!isJudged(request)) return "live";
  const wholeAnswer = request.toolChoice === "required" || forcedTool(request.toolChoice) !== undefined || request.format !== undefined || injectRespondTool;
  return wholeAnswer ? "whole" : "judged";
}

export interface AnswerCall {
  id: string;
  name: string;
  /** Validated object args, or the model's raw value when retries ran out on bad args. */
  args: unknown;
}

/** What the caller receives: one assistant turn. */
export type ProxyAnswer =
  | { type: "text"; content: string; reasoning?: string }
  | { type: "tool_calls"; calls: AnswerCall[]; content?: string; reasoning?: string };

/** Why retries ran out (the `forge` field of an exhausted answer). */
export interface Exhaustion {
  reason: "retries" | "tool_errors";
  attempts: number;
  lastError: string;
  /** Calls of the last answer that were not handed on (handedOn): none of them reaches the caller. */
  dropped?: DroppedCalls;
}

export interface DroppedCalls {
  /** Calls to tools the request did not offer, and the first few of their names. */
  unoffered: number;
  unofferedNames: string[];
  /** Calls beyond the per-answer limit. */
  overLimit: number;
}

export type ProxyOutcome =
  | { kind: "answer"; answer: ProxyAnswer; usage: Usage; attempts: number; rescued: boolean; exhausted?: Exhaustion }
  | { kind: "failed"; error: ErrorRecord; attempts: number }
  | { kind: "cancelled"; reason: string };

/** The one tool the request's tool_choice forces, if it names one. */
export function forcedTool(choice: ToolChoice | undefined): string | undefined {
  return typeof choice === "object" ? choice.function.name : undefined;
}
