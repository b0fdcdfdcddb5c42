/**
 * ProxyOutcome → Ollama's /api/chat answer (api/types.go `ChatResponse`): one JSON object, or an
 * NDJSON stream of `{ model, created_at, message: { role, content, thinking? }, done: false }`
 * lines — the calls, once validated, in a line of their own as `message.tool_calls` with object
 * arguments — ending in a `done: true` line with `done_reason` and the counters.
 *
 * The durations are the proxy's own clock (nanoseconds, as Ollama's): `total_duration` and
 * `eval_duration` are the request's whole time, so a client's tokens-per-second is a lower
 * bound; `load_duration` and `prompt_eval_duration` are not known behind another API, and 0.
 */
import { objectArgs } from "../core/wire-messages.js";
import type { HttpError } from "../proxy-request/http-error.js";
import type { AnswerCall } from "../proxy-request/proxy-request.js";
import { forgeField, unsentDeltas, type AnswerOutcome, type ResponseMeta, type SentText, type SseFrame, type StreamEncoder } from "./sse-frames.js";

/** An Ollama tool call: object arguments (a raw value retries could not fix is kept visibly, as on the wire to Ollama). */
function wireCall(call: AnswerCall, index: number) {
  return { id: call.id, function: { index, name: call.name, arguments: objectArgs(call.args) } };
}

/** The `done: true` fields: why it stopped, the counts, the durations. */
function doneFields(outcome: AnswerOutcome, meta: ResponseMeta, startedNs: bigint): Record<string, unknown> {
  const elapsed = Number(process.hrtime.bigint() - startedNs);
  const fields: Record<string, unknown> = {
    done: true,
    done_reason: "stop",
    total_duration: elapsed,
    load_duration: 0,
    prompt_eval_count: outcome.usage.inputTokens,
    prompt_eval_duration: 0,
    eval_count: outcome.usage.outputTokens,
    eval_duration: elapsed,
  };
  if (meta.guarded) fields.forge = forgeField(outcome);
  return fields;
}

/**
 * @example
 * ollamaChatResponse(outcome, meta, process.hrtime.bigint()); // { model, created_at, message: { role: "assistant", content }, done: true, … }
 */
export function ollamaChatResponse(outcome: AnswerOutcome, meta: ResponseMeta, startedNs: bigint): Record<string, unknown> {
  const { answer } = outcome;
  const message: Record<string, unknown> = { role: "assistant", content: answer.type === "text" ? answer.content : (answer.content ?? "") };
  if (answer.reasoning !== undefined) message.thinking = answer.reasoning;
  if (answer.type === "tool_calls") message.tool_calls = answer.calls.map(wireCall);
  return { model: meta.model, created_at: new Date().toISOString(), message, ...doneFields(outcome, meta, startedNs) };
}

/** The NDJSON lines of one streamed answer (each frame's `data` is one line). */
export class OllamaStreamEncoder implements StreamEncoder {
  constructor(
    private readonly meta: ResponseMeta,
    private readonly startedNs: bigint,
  ) {}

  private line(message: Record<string, unknown>, extra: Record<string, unknown> = { done: false }): SseFrame {
    return { data: JSON.stringify({ model: this.meta.model, created_at: new Date().toISOString(), message: { role: "assistant", content: "", ...message }, ...extra }) };
  }

  /** Ollama's stream has no opening line: the first delta is the first line. */
  open(): SseFrame[] {
    return [];
  }

  delta(channel: "content" | "reasoning", text: string): SseFrame[] {
    return [this.line(channel === "reasoning" ? { thinking: text } : { content: text })];
  }

  finish(outcome: AnswerOutcome, sent: SentText): SseFrame[] {
    const { answer } = outcome;
    const frames: SseFrame[] = unsentDeltas(answer, sent).map(([channel, text]) => this.delta(channel, text)[0]!);
    if (answer.type === "tool_calls") frames.push(this.line({ tool_calls: answer.calls.map(wireCall) }));
    frames.push(this.line({}, doneFields(outcome, this.meta, this.startedNs)));
    return frames;
  }

  /** An error after the first line is a line of its own, as Ollama sends one. */
  error(error: HttpError): SseFrame[] {
    return [{ data: JSON.stringify(error.body("ollama")) }];
  }

  /**
   * While the proxy judges and retries: a line with no text (Ollama sends such lines itself, e.g.
   * beside thinking), since NDJSON has no comment a client would skip.
   */
  ping(): SseFrame {
    return this.line({});
  }
}
