/**
 * The proxy-request machine's context (plain JSON) and how a request starts. One request:
 * infer, judge the answer (verdict.ts), and either answer the caller or append the failed
 * attempt plus a nudge and infer again (request-actions.ts) — the nudges never reach the caller.
 */
import type { LLMResponse, Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import { RESPOND_TOOL_NAME } from "../tools/respond.js";
import { forcedTool, toolsGuarded, type Exhaustion, type ProxyAnswer, type ProxyRequest } from "./proxy-request.js";
import type { ErrorRecord } from "./http-error.js";
import type { ProxyPolicy } from "./request-policy.js";

export interface ProxyGuardrailOptions {
  /** Consecutive unusable answers (bare text where a call is due, unknown tools) before giving up. Default 3. */
  maxRetries: number;
  /** Consecutive answers with schema-invalid arguments before giving up. Default 2. */
  maxToolErrors: number;
  rescueEnabled: boolean;
  /** Offer the model a `respond` tool for plain answers and turn its call back into text. */
  injectRespondTool: boolean;
  /** Workflow policy, judged from the request's own history (request-policy.ts). */
  policy?: ProxyPolicy | undefined;
}

/** The budgets one request draws on; the last two are the policy's and fail closed. */
export type Budget = "retries" | "toolErrors" | "premature" | "prereq";

export interface ProxyContext {
  requestId: string;
  request: ProxyRequest;
  /** The conversation as sent to the backend: the caller's, plus failed attempts and nudges. */
  messages: Message[];
  /** Tools offered to the backend (the caller's, plus `respond` when injected). */
  tools: ToolSpec[];
  /** Guardrails apply: the request has tools and does not forbid calling them. */
  guarded: boolean;
  respondInjected: boolean;
  options: ProxyGuardrailOptions;
  attempts: number;
  counters: Record<Budget, number>;
  usage: Usage;
  rescued: boolean;
  lastResponse?: LLMResponse;
  verdict?: Verdict;
  answer?: ProxyAnswer;
  exhausted?: Exhaustion;
  error?: ErrorRecord;
}

/**
 * Which nudge a retry sends back to the model (a bounded metric label and a span event):
 * `retry` (no usable call), `unknown_tool`, `invalid_args`, `structured_output`, and the
 * policy's `step`, `prerequisite` and `loop_break`.
 */
export type NudgeKind = "retry" | "unknown_tool" | "invalid_args" | "structured_output" | "step" | "prerequisite" | "loop_break";

/**
 * How one backend answer is judged. `rescue` names the format the calls were rescued from
 * (`client` when the client rescued them itself), whatever the verdict.
 */
export type Verdict =
  | { kind: "answer"; answer: ProxyAnswer; rescued: boolean; rescue?: string }
  | { kind: "retry"; budget: Budget; appended: Message[]; lastError: string; nudge: NudgeKind; rescue?: string; blocked?: "step" | "prerequisite" | "loop_break" | "format" };

export interface ProxyInput {
  requestId: string;
  request: ProxyRequest;
  options: ProxyGuardrailOptions;
}

/** @example createProxyContext({ requestId: "r1", request, options }).guarded */
export function createProxyContext(input: ProxyInput): ProxyContext {
  const { request, options } = input;
  const guarded = toolsGuarded(request);
  const respondInjected =
    guarded && options.injectRespondTool && forcedTool(request.toolChoice) === undefined && !request.tools.some((t) => t.name === RESPOND_TOOL_NAME);
  const tools = respondInjected ? [...request.tools, RESPOND_SPEC] : request.tools;
  return {
    requestId: input.requestId,
    request,
    messages: request.messages,
    tools,
    guarded,
    respondInjected,
    options,
    attempts: 0,
    counters: { retries: 0, toolErrors: 0, premature: 0, prereq: 0 },
    usage: { inputTokens: 0, outputTokens: 0 },
    rescued: false,
  };
}

const RESPOND_SPEC: ToolSpec = {
  name: RESPOND_TOOL_NAME,
  description: "Reply to the user in plain words. Use this whenever you want to answer instead of calling another tool.",
  parameters: { type: "object", properties: { message: { type: "string", description: "The reply, in full." } }, required: ["message"] },
};
