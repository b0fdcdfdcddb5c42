/**
 * What both dialects' stream encoders produce, and what the SSE writer sends: a named or
 * unnamed data event, or a comment (keep-alive). Also the shared rule for cutting a validated
 * answer into deltas.
 */
import type { HttpError } from "../proxy-request/http-error.js";
import type { SentText } from "../proxy-request/live-release.js";
import type { ProxyAnswer, ProxyOutcome } from "../proxy-request/proxy-request.js";
import { unsent } from "../proxy-request/live-release.js";

export { NOTHING_SENT, unsent, type SentText } from "../proxy-request/live-release.js";

export type SseFrame = { event?: string; data: string } | { comment: string };

/** The answer-carrying outcome. */
export type AnswerOutcome = Extract<ProxyOutcome, { kind: "answer" }>;

/** Identity of one response, fixed when the request starts. */
export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
  /** Guardrails ran (the request had tools it allowed): the response carries a `forge` field. */
  guarded: boolean;
  includeUsage: boolean;
}

/**
 * One dialect's stream: frames for opening, live deltas, the final answer, an error, a ping.
 * `finish` sends only what `sent` does not hold yet (see `unsent`): the held remainder of a prose
 * answer, the calls of a call answer (prose beside them that went out live is not repeated).
 */
export interface StreamEncoder {
  open(): SseFrame[];
  delta(channel: "content" | "reasoning", text: string): SseFrame[];
  finish(outcome: AnswerOutcome, sent: SentText): SseFrame[];
  error(error: HttpError): SseFrame[];
  ping(): SseFrame;
}

/** Delta size for answers sent after validation: small enough to look like a stream, few frames. */
const PIECE = 256;

/**
 * Cut text into pieces without splitting a surrogate pair.
 *
 * @example
 * pieces("abc", 2); // ["ab", "c"]
 */
export function pieces(text: string, size = PIECE): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    // Never end a piece on a high surrogate: step back, or forward when the piece is that one unit.
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += end - 1 > start ? -1 : 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** Call arguments as the JSON text the wire carries (a raw string stays as the model wrote it). */
export function argumentsText(args: unknown): string {
  return typeof args === "string" ? args : JSON.stringify(args ?? {});
}

/** The `forge` field: what the guardrails did for this answer. */
export function forgeField(outcome: AnswerOutcome): Record<string, unknown> {
  const field: Record<string, unknown> = { attempts: outcome.attempts, rescued: outcome.rescued };
  if (outcome.exhausted) field.exhausted = outcome.exhausted;
  return field;
}

/**
 * What of an answer's reasoning and text the caller has not seen yet, cut into deltas, in the
 * order every dialect sends them (reasoning first). One rule for the three encoders' `finish`.
 *
 * @example
 * unsentDeltas({ type: "text", content: "Hello there." }, { content: "Hello", reasoning: "" }); // [["content", " there."]]
 */
export function unsentDeltas(answer: ProxyAnswer, sent: SentText): ["content" | "reasoning", string][] {
  const text = answer.type === "text" ? answer.content : (answer.content ?? "");
  return [
    ...pieces(unsent(answer.reasoning ?? "", sent.reasoning)).map((p): ["reasoning", string] => ["reasoning", p]),
    ...pieces(unsent(text, sent.content)).map((p): ["content", string] => ["content", p]),
  ];
}
