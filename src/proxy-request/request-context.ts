/**
 * The proxy-request machine's context (plain JSON) and the pure functions behind its guards
 * and actions. One request: infer, judge the answer, and either answer the caller or append
 * the failed attempt plus a nudge and infer again — the nudges never reach the caller.
 */
import type { LLMResponse, ToolChoice, Usage } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import { assessResponse } from "../guardrails/assess-response.js";
import type { BlockedResult } from "../guardrails/blocked-batch.js";
import { formatNudge } from "../guardrails/nudges.js";
import { rejectionBudget, type ValidationResult } from "../guardrails/response-validator.js";
import { checkStructuredOutput, type OutputFormat } from "../guardrails/structured-output.js";
import { looksLikeToolCall } from "../parsing/call-markers.js";
import { rescueFormat } from "../parsing/rescue.js";
import { RESPOND_TOOL_NAME } from "../tools/respond.js";
import { toolsGuarded, type AnswerCall, type Exhaustion, type ProxyAnswer, type ProxyRequest } from "./proxy-request.js";
import { checkPolicy, stepRecordOf, type ProxyPolicy } from "./request-policy.js";
import { requestToolDefs, responseSchemaCheck } from "./request-tools.js";

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
  error?: { name: string; message: string; statusCode?: number };
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

function forcedTool(choice: ToolChoice | undefined): string | undefined {
  return typeof choice === "object" ? choice.function.name : undefined;
}

/** Plain text is an acceptable answer unless the caller demanded a call or `respond` is on offer. */
function textAllowed(ctx: ProxyContext): boolean {
  return ctx.request.toolChoice !== "required" && forcedTool(ctx.request.toolChoice) === undefined && !ctx.respondInjected;
}

/** The record of one backend answer: usage summed over attempts. */
export function recordResponse(ctx: ProxyContext, response: LLMResponse): Partial<ProxyContext> {
  const usage = response.usage
    ? { inputTokens: ctx.usage.inputTokens + response.usage.inputTokens, outputTokens: ctx.usage.outputTokens + response.usage.outputTokens }
    : ctx.usage;
  return { lastResponse: response, attempts: ctx.attempts + 1, usage };
}

/**
 * Judge the last answer. Unguarded requests pass through; otherwise the shared validator
 * rescues text-format calls and checks names and arguments against the request's schemas.
 */
export function assess(ctx: ProxyContext): Verdict {
  const response = ctx.lastResponse;
  if (!response) throw new Error("assess needs a response");
  if (!ctx.guarded) return { kind: "answer", answer: passThroughAnswer(response, ctx), rescued: false };
  const forced = forcedTool(ctx.request.toolChoice);
  const specs = forced === undefined ? ctx.tools : ctx.tools.filter((t) => t.name === forced);
  const names = specs.map((t) => t.name);
  const validation = assessResponse(response, { rescueEnabled: ctx.options.rescueEnabled, toolNames: names }, requestToolDefs(specs));
  return verdictOf(ctx, response, validation, names);
}

function verdictOf(ctx: ProxyContext, response: LLMResponse, v: ValidationResult, names: readonly string[]): Verdict {
  const step = ctx.attempts;
  const rescue = v.kind !== "retry" && v.rescued ? { rescue: rescuedFrom(response, names) } : {};
  if (v.kind === "calls") {
    const calls = v.calls.map((c, i) => ({ id: callId(ctx, response, i), name: c.tool, args: c.args }));
    return { kind: "answer", answer: withoutRespond(calls, response, v.text), rescued: v.rescued, ...rescue };
  }
  if (v.kind === "retry") {
    // A retry verdict on calls is a limit (too many calls, arguments nested too deep); on text, no call was found.
    const text = response.type === "text" ? response.content : "";
    if (response.type === "text" && textAllowed(ctx) && !looksLikeToolCall(text, ctx.tools.map((t) => t.name))) {
      return { kind: "answer", answer: textAnswer(text, response.reasoning), rescued: false };
    }
    const appended = [
      createMessage("assistant", text, MessageType.TEXT_RESPONSE, { stepIndex: step }),
      createMessage("user", v.nudge.content, MessageType.RETRY_NUDGE, { stepIndex: step }),
    ];
    const lastError = response.type === "tool_calls" ? v.nudge.content : text.trim() === "" ? "empty reply" : "plain text where a tool call was due";
    return { kind: "retry", budget: "retries", appended, lastError, nudge: "retry" };
  }
  const calls = v.calls.map((c, i) => ({ id: callId(ctx, response, i), name: c.tool, args: c.args }));
  const results = v.rejections.map((r) => ({ index: r.index, tool: r.tool, content: r.message }));
  const offending = v.rejections.filter((r) => r.kind !== "batch_skipped").map((r) => r.message);
  const nudge: NudgeKind = v.rejections.some((r) => r.kind === "unknown_tool") ? "unknown_tool" : "invalid_args";
  return { kind: "retry", budget: rejectionBudget(v.rejections), appended: blockedTurn(step, v.text, calls, results), lastError: offending.join("\n"), nudge, ...rescue };
}

/** The rescued calls' format family: from the text, or as the client that rescued them says (`client` when it does not). */
function rescuedFrom(response: LLMResponse, names: readonly string[]): string {
  if (response.type !== "text") return response.rescueFormat ?? "client";
  return rescueFormat(response.content, names) ?? "unknown";
}

/** The model's blocked batch and one tool-channel answer per call, as the next attempt sees them. */
function blockedTurn(step: number, text: string | undefined, calls: readonly AnswerCall[], results: readonly BlockedResult[]): Message[] {
  return [
    createMessage("assistant", text ?? "", MessageType.TOOL_CALL, { stepIndex: step, toolCalls: calls.map((c) => ({ name: c.name, args: c.args, callId: c.id })) }),
    ...results.map((r) => createMessage("tool", r.content, MessageType.TOOL_RESULT, { stepIndex: step, toolName: r.tool, toolCallId: calls[r.index]!.id })),
  ];
}

/**
 * Judge an accepted batch against the workflow policy, with the step record read from the
 * caller's messages (this request's own blocked attempts are not steps: they never ran).
 */
export function enforcePolicy(ctx: ProxyContext): Verdict {
  const v = ctx.verdict;
  const policy = ctx.options.policy;
  if (v?.kind !== "answer" || v.answer.type !== "tool_calls" || !policy) throw new Error("enforcePolicy needs a tool-call answer and a policy");
  const record = stepRecordOf(ctx.request.messages, new Set(ctx.request.failedCallIds));
  const calls = v.answer.calls.map((c) => ({ tool: c.name, args: c.args }));
  const offered = ctx.request.tools.map((t) => t.name);
  const check = checkPolicy(calls, policy, record, offered, { premature: ctx.counters.premature, prereq: ctx.counters.prereq });
  if (check.ok) return v;
  const budget: Budget = check.kind === "step" ? "premature" : check.kind === "prerequisite" ? "prereq" : "toolErrors";
  // No `rescue` here: the rescue was reported when the answer was first judged.
  return { kind: "retry", budget, appended: blockedTurn(ctx.attempts, v.answer.content, v.answer.calls, check.results), lastError: check.lastError, blocked: check.kind, nudge: check.kind };
}

/** Judge a text answer against the caller's output format; the accepted answer is the JSON alone. */
export function checkFormat(ctx: ProxyContext): Verdict {
  const v = ctx.verdict;
  const format = ctx.request.format;
  if (v?.kind !== "answer" || v.answer.type !== "text" || !format) throw new Error("checkFormat needs a text answer and a format");
  const check = checkStructuredOutput(v.answer.content, format, format.kind === "json_schema" ? responseSchemaCheck(format.schema) : undefined);
  if (check.ok) return { ...v, answer: { ...v.answer, content: check.json } };
  const appended = [
    createMessage("assistant", v.answer.content, MessageType.TEXT_RESPONSE, { stepIndex: ctx.attempts }),
    createMessage("user", formatNudge(wantedFormat(format), check.issues).content, MessageType.RETRY_NUDGE, { stepIndex: ctx.attempts }),
  ];
  return { kind: "retry", budget: "retries", appended, lastError: `not the requested JSON: ${check.issues.join("; ")}`, blocked: "format", nudge: "structured_output" };
}

function wantedFormat(format: OutputFormat): string {
  return format.kind === "json_object" ? "a JSON object" : `JSON matching the schema "${format.name}": ${JSON.stringify(format.schema)}`;
}

/** The caller's ids when the model gave them; otherwise unique per request and attempt. */
function callId(ctx: ProxyContext, response: LLMResponse, index: number): string {
  const given = response.type === "tool_calls" ? response.toolCalls[index]?.id : undefined;
  return given !== undefined && given !== "" ? given : `call_${ctx.requestId}_${ctx.attempts}_${index}`;
}

function textAnswer(content: string, reasoning: string | undefined): ProxyAnswer {
  return reasoning === undefined ? { type: "text", content } : { type: "text", content, reasoning };
}

/** A `respond` call is the model's plain answer; beside real calls it is dropped. Prose beside the calls is kept. */
function withoutRespond(calls: AnswerCall[], response: LLMResponse, text: string | undefined): ProxyAnswer {
  const real = calls.filter((c) => c.name !== RESPOND_TOOL_NAME);
  const reasoning = response.reasoning;
  if (real.length === 0 && calls.length > 0) {
    const said = calls.map((c) => String((c.args as { message?: unknown }).message ?? "")).join("\n\n");
    return textAnswer(said, reasoning);
  }
  const answer: ProxyAnswer = { type: "tool_calls", calls: real.length > 0 ? real : calls };
  if (text !== undefined) answer.content = text;
  if (reasoning !== undefined) answer.reasoning = reasoning;
  return answer;
}

/** The backend's answer as it came, for unguarded requests and exhausted retries. */
export function passThroughAnswer(response: LLMResponse, ctx: ProxyContext): ProxyAnswer {
  if (response.type === "text") return textAnswer(response.content, response.reasoning);
  const calls = response.toolCalls.map((c, i) => ({ id: callId(ctx, response, i), name: c.tool, args: c.args }));
  const answer: ProxyAnswer = { type: "tool_calls", calls };
  if (response.content !== undefined) answer.content = response.content;
  if (response.reasoning !== undefined) answer.reasoning = response.reasoning;
  return answer;
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

/** Retries ran out: the caller gets the last answer as it was, marked exhausted. */
export function recordExhausted(ctx: ProxyContext): Partial<ProxyContext> {
  const v = ctx.verdict;
  if (v?.kind !== "retry" || !ctx.lastResponse) throw new Error("recordExhausted needs a retry verdict");
  return {
    answer: passThroughAnswer(ctx.lastResponse, ctx),
    exhausted: { reason: v.budget === "toolErrors" ? "tool_errors" : "retries", attempts: ctx.attempts, lastError: v.lastError },
  };
}

/** Accept the verdict's answer. */
export function recordAnswer(ctx: ProxyContext): Partial<ProxyContext> {
  const v = ctx.verdict;
  if (v?.kind !== "answer") throw new Error("recordAnswer needs an answer verdict");
  return { answer: v.answer, rescued: ctx.rescued || v.rescued };
}
