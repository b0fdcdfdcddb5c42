/**
 * The proxy-request machine's judging: a backend answer becomes a Verdict — the answer to hand
 * the caller, or a retry with the messages and nudge the next attempt sees and the budget it
 * draws on. Pure functions of the context.
 */
import type { LLMResponse } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import { assessResponse } from "../guardrails/assess-response.js";
import type { BlockedResult } from "../guardrails/blocked-batch.js";
import { formatNudge } from "../guardrails/nudges.js";
import { rejectionBudget, type ValidationResult } from "../guardrails/response-validator.js";
import { checkStructuredOutput, type OutputFormat } from "../guardrails/structured-output.js";
import { looksLikeToolCall } from "../parsing/call-markers.js";
import { RESPOND_TOOL_NAME } from "../tools/respond.js";
import { forcedTool, type AnswerCall, type ProxyAnswer } from "./proxy-request.js";
import type { Budget, NudgeKind, ProxyContext, Verdict } from "./request-context.js";
import { checkPolicy, stepRecordOf } from "./request-policy.js";
import { requestToolDefs, responseSchemaCheck } from "./request-tools.js";

/** Plain text is an acceptable answer unless the caller demanded a call or `respond` is on offer. */
function textAllowed(ctx: ProxyContext): boolean {
  return ctx.request.toolChoice !== "required" && forcedTool(ctx.request.toolChoice) === undefined && !ctx.respondInjected;
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
  // Made once per tool list (request-tools.ts): each attempt reuses the first's (a forced tool's one-tool list only finds its shape cached).
  const validation = assessResponse(response, { rescueEnabled: ctx.options.rescueEnabled, toolNames: names }, requestToolDefs(specs));
  return verdictOf(ctx, response, validation);
}

function verdictOf(ctx: ProxyContext, response: LLMResponse, v: ValidationResult): Verdict {
  const step = ctx.attempts;
  // The validator names the rescued calls' format family ("client" when the client rescued them and did not say).
  const rescue = v.kind !== "retry" && v.rescued ? { rescue: v.rescueFormat ?? "unknown" } : {};
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
