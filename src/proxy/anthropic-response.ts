/**
 * ProxyOutcome → Anthropic Messages: the `message` object, and the event stream
 * (message_start, content blocks — thinking, text, tool_use with input_json_delta —,
 * message_delta with stop_reason and usage, message_stop; `ping` while waiting).
 */
import type { HttpError } from "../proxy-request/http-error.js";
import type { ProxyAnswer } from "../proxy-request/proxy-request.js";
import { forgeField, pieces, unsentDeltas, type AnswerOutcome, type SentText, type ResponseMeta, type SseFrame, type StreamEncoder } from "./sse-frames.js";

function stopReason(answer: ProxyAnswer): "tool_use" | "end_turn" {
  return answer.type === "tool_calls" ? "tool_use" : "end_turn";
}

/** tool_use input must be an object; a raw (unparseable) value is kept visibly under a key. */
function inputObject(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { _invalid_arguments: args ?? null };
}

function blocks(answer: ProxyAnswer): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (answer.reasoning) out.push({ type: "thinking", thinking: answer.reasoning, signature: "" });
  const text = answer.type === "text" ? answer.content : (answer.content ?? "");
  if (text !== "" || answer.type === "text") out.push({ type: "text", text });
  if (answer.type === "tool_calls") for (const c of answer.calls) out.push({ type: "tool_use", id: c.id, name: c.name, input: inputObject(c.args) });
  return out;
}

/**
 * @example
 * anthropicMessage(outcome, { id: "msg_1", created: 0, model: "qwen3:8b", guarded: false, includeUsage: true });
 */
export function anthropicMessage(outcome: AnswerOutcome, meta: ResponseMeta): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content: blocks(outcome.answer),
    stop_reason: stopReason(outcome.answer),
    stop_sequence: null,
    usage: { input_tokens: outcome.usage.inputTokens, output_tokens: outcome.usage.outputTokens },
  };
  if (meta.guarded) body.forge = forgeField(outcome);
  return body;
}

const frame = (event: string, data: Record<string, unknown>): SseFrame => ({ event, data: JSON.stringify({ type: event, ...data }) });

/** The event stream of one response; tracks the open content block across live deltas. */
export class AnthropicStreamEncoder implements StreamEncoder {
  private index = -1;
  private openBlock: "text" | "thinking" | undefined;

  constructor(private readonly meta: ResponseMeta) {}

  open(): SseFrame[] {
    const message = { id: this.meta.id, type: "message", role: "assistant", model: this.meta.model, content: [], stop_reason: null, stop_sequence: null };
    return [frame("message_start", { message: { ...message, usage: { input_tokens: 0, output_tokens: 0 } } })];
  }

  private close(): SseFrame[] {
    if (this.openBlock === undefined) return [];
    this.openBlock = undefined;
    return [frame("content_block_stop", { index: this.index })];
  }

  private start(block: Record<string, unknown>): SseFrame[] {
    const frames = this.close();
    this.index++;
    if (block.type === "text" || block.type === "thinking") this.openBlock = block.type;
    frames.push(frame("content_block_start", { index: this.index, content_block: block }));
    return frames;
  }

  delta(channel: "content" | "reasoning", text: string): SseFrame[] {
    const type = channel === "reasoning" ? "thinking" : "text";
    const frames = this.openBlock === type ? [] : this.start(type === "text" ? { type, text: "" } : { type, thinking: "", signature: "" });
    const delta = type === "text" ? { type: "text_delta", text } : { type: "thinking_delta", thinking: text };
    frames.push(frame("content_block_delta", { index: this.index, delta }));
    return frames;
  }

  finish(outcome: AnswerOutcome, sent: SentText): SseFrame[] {
    const { answer } = outcome;
    const frames: SseFrame[] = [];
    for (const [channel, p] of unsentDeltas(answer, sent)) frames.push(...this.delta(channel, p));
    if (answer.type === "text" && this.index === -1) frames.push(...this.start({ type: "text", text: "" }));
    if (answer.type === "tool_calls") {
      for (const call of answer.calls) {
        frames.push(...this.start({ type: "tool_use", id: call.id, name: call.name, input: {} }));
        for (const p of pieces(JSON.stringify(inputObject(call.args)))) {
          frames.push(frame("content_block_delta", { index: this.index, delta: { type: "input_json_delta", partial_json: p } }));
        }
        frames.push(frame("content_block_stop", { index: this.index }));
      }
    }
    frames.push(...this.close());
    const usage = { input_tokens: outcome.usage.inputTokens, output_tokens: outcome.usage.outputTokens };
    const extra = this.meta.guarded ? { forge: forgeField(outcome) } : {};
    frames.push(frame("message_delta", { delta: { stop_reason: stopReason(answer), stop_sequence: null }, usage, ...extra }));
    frames.push(frame("message_stop", {}));
    return frames;
  }

  error(error: HttpError): SseFrame[] {
    return [{ event: "error", data: JSON.stringify(error.body("anthropic")) }];
  }

  ping(): SseFrame {
    return frame("ping", {});
  }
}
