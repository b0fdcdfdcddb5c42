/**
 * ProxyOutcome → OpenAI Responses: the `response` object (output items: `reasoning` with a
 * summary, `message` with output_text parts, `function_call` with the caller's own tool name
 * and namespace), and its event stream as OpenAI sends it — every event named, typed and
 * numbered (`sequence_number`): response.created / in_progress, per item output_item.added,
 * its parts and deltas, output_item.done, then response.completed with usage; on failure an
 * `error` event (the openai SDKs throw on its `error` key) and `response.failed` (the terminal
 * event Codex reads). Keep-alives are SSE comments, which every SSE parser skips.
 */
import type { HttpError } from "../proxy-request/http-error.js";
import type { AnswerCall } from "../proxy-request/proxy-request.js";
import type { ResponsesShape } from "./responses-request.js";
import { argumentsText, forgeField, pieces, unsentDeltas, type AnswerOutcome, type ResponseMeta, type SentText, type SseFrame, type StreamEncoder } from "./sse-frames.js";

type Item = Record<string, unknown>;

function usageOf(outcome: AnswerOutcome) {
  const { inputTokens, outputTokens } = outcome.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

const textPart = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });
const summaryPart = (text: string) => ({ type: "summary_text", text });

/** A call as a function_call item: the caller's own name, and its namespace when it declared one. */
function callItem(call: AnswerCall, id: string, shape: ResponsesShape, args: string): Item {
  const origin = Object.hasOwn(shape.names, call.name) ? shape.names[call.name] : undefined;
  const naming = origin === undefined ? { name: call.name } : { name: origin.name, namespace: origin.namespace };
  return { id, type: "function_call", status: "completed", arguments: args, call_id: call.id, ...naming };
}

/** The response object around `output`, in a given status. */
function responseObject(meta: ResponseMeta, shape: ResponsesShape, status: string, output: Item[], extra: Record<string, unknown> = {}): Item {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    model: meta.model,
    output,
    previous_response_id: null,
    ...shape.echo,
    usage: null,
    ...extra,
  };
}

/** Item ids derive from the response id (`resp_x` → `msg_x_0`, `fc_x_1`, ...): unique without a counter shared across requests. */
function itemId(meta: ResponseMeta, prefix: string, n: number): string {
  return `${prefix}_${meta.id.replace(/^resp_/, "")}_${n}`;
}

/**
 * @example
 * responsesResponse(outcome, meta, { names: {}, dropped: [], echo: {} }).object; // "response"
 */
export function responsesResponse(outcome: AnswerOutcome, meta: ResponseMeta, shape: ResponsesShape): Item {
  const { answer } = outcome;
  const output: Item[] = [];
  if (answer.reasoning) output.push({ id: itemId(meta, "rs", output.length), type: "reasoning", summary: [summaryPart(answer.reasoning)] });
  const text = answer.type === "text" ? answer.content : (answer.content ?? "");
  if (text !== "" || answer.type === "text") {
    output.push({ id: itemId(meta, "msg", output.length), type: "message", status: "completed", role: "assistant", content: [textPart(text)] });
  }
  if (answer.type === "tool_calls") for (const call of answer.calls) output.push(callItem(call, itemId(meta, "fc", output.length), shape, argumentsText(call.args)));
  const body = responseObject(meta, shape, "completed", output, { usage: usageOf(outcome) });
  if (meta.guarded) body.forge = forgeField(outcome);
  return body;
}

/** The open text-carrying item of a stream: a reasoning summary or an assistant message. */
interface OpenItem {
  kind: "reasoning" | "message";
  id: string;
  index: number;
  text: string;
}

/** The event stream of one response; tracks the open item across live deltas and numbers every event. */
export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0;
  private readonly output: Item[] = [];
  private item: OpenItem | undefined;

  constructor(
    private readonly meta: ResponseMeta,
    private readonly shape: ResponsesShape,
  ) {}

  private event(type: string, data: Record<string, unknown>): SseFrame {
    return { event: type, data: JSON.stringify({ type, sequence_number: this.sequence++, ...data }) };
  }

  open(): SseFrame[] {
    const response = responseObject(this.meta, this.shape, "in_progress", []);
    return [this.event("response.created", { response }), this.event("response.in_progress", { response })];
  }

  private close(): SseFrame[] {
    const open = this.item;
    if (open === undefined) return [];
    this.item = undefined;
    const where = { item_id: open.id, output_index: open.index };
    let item: Item;
    const frames: SseFrame[] = [];
    if (open.kind === "reasoning") {
      item = { id: open.id, type: "reasoning", summary: [summaryPart(open.text)] };
      frames.push(this.event("response.reasoning_summary_text.done", { ...where, summary_index: 0, text: open.text }));
      frames.push(this.event("response.reasoning_summary_part.done", { ...where, summary_index: 0, part: summaryPart(open.text) }));
    } else {
      item = { id: open.id, type: "message", status: "completed", role: "assistant", content: [textPart(open.text)] };
      frames.push(this.event("response.output_text.done", { ...where, content_index: 0, text: open.text, logprobs: [] }));
      frames.push(this.event("response.content_part.done", { ...where, content_index: 0, part: textPart(open.text) }));
    }
    this.output.push(item);
    frames.push(this.event("response.output_item.done", { output_index: open.index, item }));
    return frames;
  }

  private start(kind: OpenItem["kind"]): SseFrame[] {
    const frames = this.close();
    const index = this.output.length;
    const id = itemId(this.meta, kind === "reasoning" ? "rs" : "msg", index);
    this.item = { kind, id, index, text: "" };
    const where = { item_id: id, output_index: index };
    if (kind === "reasoning") {
      frames.push(this.event("response.output_item.added", { output_index: index, item: { id, type: "reasoning", summary: [] } }));
      frames.push(this.event("response.reasoning_summary_part.added", { ...where, summary_index: 0, part: summaryPart("") }));
    } else {
      frames.push(this.event("response.output_item.added", { output_index: index, item: { id, type: "message", status: "in_progress", role: "assistant", content: [] } }));
      frames.push(this.event("response.content_part.added", { ...where, content_index: 0, part: textPart("") }));
    }
    return frames;
  }

  delta(channel: "content" | "reasoning", text: string): SseFrame[] {
    const kind = channel === "reasoning" ? "reasoning" : "message";
    const frames = this.item?.kind === kind ? [] : this.start(kind);
    const open = this.item!;
    open.text += text;
    const where = { item_id: open.id, output_index: open.index };
    frames.push(
      kind === "reasoning"
        ? this.event("response.reasoning_summary_text.delta", { ...where, summary_index: 0, delta: text })
        : this.event("response.output_text.delta", { ...where, content_index: 0, delta: text, logprobs: [] }),
    );
    return frames;
  }

  finish(outcome: AnswerOutcome, sent: SentText): SseFrame[] {
    const { answer } = outcome;
    const frames: SseFrame[] = [];
    for (const [channel, p] of unsentDeltas(answer, sent)) frames.push(...this.delta(channel, p));
    // A text answer always has its message item, even an empty one.
    if (answer.type === "text" && !this.output.some((i) => i.type === "message") && this.item?.kind !== "message") frames.push(...this.start("message"));
    frames.push(...this.close());
    if (answer.type === "tool_calls") for (const call of answer.calls) frames.push(...this.call(call));
    const response = responseObject(this.meta, this.shape, "completed", this.output, { usage: usageOf(outcome) });
    if (this.meta.guarded) response.forge = forgeField(outcome);
    frames.push(this.event("response.completed", { response }));
    return frames;
  }

  private call(call: AnswerCall): SseFrame[] {
    const index = this.output.length;
    const args = argumentsText(call.args);
    const done = callItem(call, itemId(this.meta, "fc", index), this.shape, args);
    const where = { item_id: done.id, output_index: index };
    const frames = [this.event("response.output_item.added", { output_index: index, item: { ...done, status: "in_progress", arguments: "" } })];
    for (const p of pieces(args)) frames.push(this.event("response.function_call_arguments.delta", { ...where, delta: p }));
    frames.push(this.event("response.function_call_arguments.done", { ...where, name: done.name, arguments: args }));
    this.output.push(done);
    frames.push(this.event("response.output_item.done", { output_index: index, item: done }));
    return frames;
  }

  error(error: HttpError): SseFrame[] {
    const { type, message } = error;
    const code = error.status >= 500 ? "server_error" : type;
    const response = responseObject(this.meta, this.shape, "failed", this.output, { error: { code, message } });
    return [this.event("error", { code, message, param: null, error: { type, code, message, param: null } }), this.event("response.failed", { response })];
  }

  ping(): SseFrame {
    return { comment: "keep-alive" };
  }
}
