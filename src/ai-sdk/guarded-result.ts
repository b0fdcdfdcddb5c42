/**
 * The machine's answer for one call, back in the AI SDK's shapes: a LanguageModelV4
 * generate result, or the parts of a stream. Accepted calls (rescued from text or not) are
 * tool-call parts whose input is the validated arguments as JSON; the model's own call parts
 * keep their provider fields. `providerMetadata.forge` says what the guardrails did.
 */
import type { JSONObject, LanguageModelV4Content, LanguageModelV4GenerateResult, LanguageModelV4StreamPart, LanguageModelV4ToolCall, LanguageModelV4Usage } from "@ai-sdk/provider";
import { NOTHING_SENT, unsent, type SentText } from "../proxy-request/live-release.js";
import type { ProxyAnswer, ProxyOutcome } from "../proxy-request/proxy-request.js";
import type { ModelAttempt } from "./model-attempt.js";

type Answered = Extract<ProxyOutcome, { kind: "answer" }>;

/** What the call's own metadata carries about the guardrails (JSON, under `providerMetadata.forge`). */
export interface ForgeCallMetadata {
  attempts: number;
  rescued: boolean;
  exhausted?: { reason: string; attempts: number; lastError: string; dropped?: { unoffered: number; unofferedNames: string[]; overLimit: number } };
}

function forgeMetadata(outcome: Answered): JSONObject {
  const meta: JSONObject = { attempts: outcome.attempts, rescued: outcome.rescued };
  if (outcome.exhausted) {
    const { dropped, ...exhausted } = outcome.exhausted;
    meta.exhausted = dropped === undefined ? exhausted : { ...exhausted, dropped: { ...dropped } };
  }
  return meta;
}

function callParts(answer: ProxyAnswer, last: ModelAttempt): LanguageModelV4ToolCall[] {
  if (answer.type !== "tool_calls") return [];
  return answer.calls.map((c) => {
    const own = last.calls.get(c.id);
    const input = typeof c.args === "string" ? c.args : JSON.stringify(c.args);
    return own ? { ...own, toolName: c.name, input } : { type: "tool-call", toolCallId: c.id, toolName: c.name, input };
  });
}

function finishReason(answer: ProxyAnswer, last: ModelAttempt): LanguageModelV4GenerateResult["finishReason"] {
  // Calls rescued from text arrive with the model's "stop": the caller must see "tool-calls".
  if (answer.type === "tool_calls") return { unified: "tool-calls", raw: last.finishReason.raw };
  // A text answer after a call attempt was rejected ends as the model's last attempt ended.
  return last.finishReason.unified === "tool-calls" ? { unified: "stop", raw: last.finishReason.raw } : last.finishReason;
}

function textOf(answer: ProxyAnswer): string {
  return answer.type === "text" ? answer.content : (answer.content ?? "");
}

/**
 * @example
 * const result = generateResult(outcome, lastAttempt, usage); // result.content: [text?, ...tool-call parts]
 */
export function generateResult(outcome: Answered, last: ModelAttempt, usage: LanguageModelV4Usage): LanguageModelV4GenerateResult {
  const { answer } = outcome;
  const content: LanguageModelV4Content[] = [];
  if (answer.reasoning !== undefined && answer.reasoning !== "") content.push({ type: "reasoning", text: answer.reasoning });
  const text = textOf(answer);
  if (text !== "") content.push({ type: "text", text });
  content.push(...callParts(answer, last), ...last.extras);
  const result: LanguageModelV4GenerateResult = {
    content,
    finishReason: finishReason(answer, last),
    usage,
    providerMetadata: { ...last.providerMetadata, forge: forgeMetadata(outcome) },
    warnings: last.warnings,
  };
  if (last.records?.request !== undefined) result.request = last.records.request;
  if (last.records?.response !== undefined) result.response = last.records.response;
  return result;
}

/** What a live stream already carried before the judged answer's parts (forge-guardrails.ts). */
export interface StreamedSoFar {
  /** stream-start (and response metadata) went out with the first live delta. */
  started: boolean;
  /** Blocks left open by live deltas: the final parts add the rest to them, then end them. */
  open: { text: boolean; reasoning: boolean };
  sent: SentText;
}

export const TEXT_ID = "text-0";
export const REASONING_ID = "reasoning-0";

/**
 * The judged answer as stream parts, in the order a provider writes them; after live deltas
 * (`so`), only what they did not carry.
 *
 * @example
 * new ReadableStream({ start(c) { for (const p of streamParts(outcome, last, usage)) c.enqueue(p); c.close(); } });
 */
export function streamParts(outcome: Answered, last: ModelAttempt, usage: LanguageModelV4Usage, so?: StreamedSoFar): LanguageModelV4StreamPart[] {
  const { answer } = outcome;
  const sent = so?.sent ?? NOTHING_SENT;
  const parts: LanguageModelV4StreamPart[] = [];
  if (so?.started !== true) {
    parts.push({ type: "stream-start", warnings: last.warnings });
    if (last.streamMetadata !== undefined) parts.push({ type: "response-metadata", ...last.streamMetadata });
  }
  const block = (id: string, open: boolean, rest: string, kind: "text" | "reasoning") => {
    if (!open && rest === "") return;
    if (!open) parts.push({ type: `${kind}-start`, id });
    if (rest !== "") parts.push({ type: `${kind}-delta`, id, delta: rest });
    parts.push({ type: `${kind}-end`, id });
  };
  block(REASONING_ID, so?.open.reasoning === true, unsent(answer.reasoning ?? "", sent.reasoning), "reasoning");
  block(TEXT_ID, so?.open.text === true, unsent(textOf(answer), sent.content), "text");
  for (const call of callParts(answer, last)) {
    parts.push(
      { type: "tool-input-start", id: call.toolCallId, toolName: call.toolName },
      { type: "tool-input-delta", id: call.toolCallId, delta: call.input },
      { type: "tool-input-end", id: call.toolCallId },
      call,
    );
  }
  parts.push(...(last.extras as LanguageModelV4StreamPart[]));
  parts.push({ type: "finish", usage, finishReason: finishReason(answer, last), providerMetadata: { ...last.providerMetadata, forge: forgeMetadata(outcome) } });
  return parts;
}
