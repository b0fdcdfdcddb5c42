/**
 * ProxyOutcome → OpenAI chat completions: the `chat.completion` object, and the
 * `chat.completion.chunk` stream (role, reasoning_content and content deltas, tool_calls deltas
 * by index, finish_reason, optional usage chunk, `[DONE]`).
 */
import type { HttpError } from "../proxy-request/http-error.js";
import type { AnswerCall, ProxyAnswer } from "../proxy-request/proxy-request.js";
import { argumentsText, forgeField, pieces, unsentDeltas, type AnswerOutcome, type ResponseMeta, type SentText, type SseFrame, type StreamEncoder } from "./sse-frames.js";

function finishReason(answer: ProxyAnswer): "tool_calls" | "stop" {
  return answer.type === "tool_calls" ? "tool_calls" : "stop";
}

function usageOf(outcome: AnswerOutcome) {
  const { inputTokens, outputTokens } = outcome.usage;
  return { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
}

function wireCall(call: AnswerCall) {
  return { id: call.id, type: "function" as const, function: { name: call.name, arguments: argumentsText(call.args) } };
}

/**
 * @example
 * chatCompletion(outcome, { id: "chatcmpl-1", created: 0, model: "qwen3:8b", guarded: true, includeUsage: false });
 */
export function chatCompletion(outcome: AnswerOutcome, meta: ResponseMeta): Record<string, unknown> {
  const { answer } = outcome;
  const message: Record<string, unknown> = { role: "assistant", content: answer.type === "text" ? answer.content : (answer.content ?? null) };
  if (answer.reasoning !== undefined) message.reasoning_content = answer.reasoning;
  if (answer.type === "tool_calls") message.tool_calls = answer.calls.map(wireCall);
  const body: Record<string, unknown> = {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer) }],
    usage: usageOf(outcome),
  };
  if (meta.guarded) body.forge = forgeField(outcome);
  return body;
}

/** The chunk stream of one response. */
export class OpenAIStreamEncoder implements StreamEncoder {
  constructor(private readonly meta: ResponseMeta) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): SseFrame {
    const { id, created, model } = this.meta;
    const body = { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra };
    return { data: JSON.stringify(body) };
  }

  open(): SseFrame[] {
    return [this.chunk({ role: "assistant", content: "" })];
  }

  delta(channel: "content" | "reasoning", text: string): SseFrame[] {
    return [this.chunk(channel === "reasoning" ? { reasoning_content: text } : { content: text })];
  }

  finish(outcome: AnswerOutcome, sent: SentText): SseFrame[] {
    const { answer } = outcome;
    const frames: SseFrame[] = [];
    for (const [channel, p] of unsentDeltas(answer, sent)) frames.push(...this.delta(channel, p));
    if (answer.type === "tool_calls") {
      answer.calls.forEach((call, index) => {
        frames.push(this.chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
        for (const p of pieces(argumentsText(call.args))) frames.push(this.chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
      });
    }
    frames.push(this.chunk({}, finishReason(answer), this.meta.guarded ? { forge: forgeField(outcome) } : {}));
    if (this.meta.includeUsage) {
      const { id, created, model } = this.meta;
      frames.push({ data: JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage: usageOf(outcome) }) });
    }
    frames.push({ data: "[DONE]" });
    return frames;
  }

  /** The openai SDK raises an APIError for a data event carrying `error`. */
  error(error: HttpError): SseFrame[] {
    return [{ data: JSON.stringify(error.body("openai")) }];
  }

  ping(): SseFrame {
    return { comment: "ping" };
  }
}
