/**
 * The compat APIs a real Ollama also serves, rendered from a scripted reply: Anthropic Messages
 * (JSON and SSE) and OpenAI Responses (JSON and SSE). Written here, small and independent of
 * src/proxy, because the fake model stands for the model server the proxy is tested against —
 * encoding its answers with the proxy's own encoders would test the proxy against itself.
 * (Ollama /api/chat and Chat Completions come from test/clients/support/wire.ts.)
 */
import { pieces, type ModelReply } from "../../clients/support/wire.js";

/** One SSE frame: `event:` (when named) and `data:` lines. */
export interface SseFrame {
  event?: string;
  data: unknown;
}

/** The SSE text of frames, ready to write. */
export function sseText(frames: readonly SseFrame[]): string {
  return frames.map((f) => `${f.event === undefined ? "" : `event: ${f.event}\n`}data: ${JSON.stringify(f.data)}\n\n`).join("");
}

const argsText = (args: unknown): string => (typeof args === "string" ? args : JSON.stringify(args));
const usageOf = (reply: ModelReply) => ({ input: reply.usage?.input ?? 11, output: reply.usage?.output ?? 7 });

// ── Anthropic Messages ───────────────────────────────────────────────────────────────

function anthropicBlocks(reply: ModelReply): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  if (reply.content) blocks.push({ type: "text", text: reply.content });
  for (const [i, c] of (reply.toolCalls ?? []).entries()) {
    blocks.push({ type: "tool_use", id: c.id ?? `toolu_${i}`, name: c.name, input: typeof c.args === "string" ? JSON.parse(c.args) : c.args });
  }
  return blocks;
}

export function anthropicMessage(reply: ModelReply, model: string): Record<string, unknown> {
  const usage = usageOf(reply);
  return {
    id: "msg_fake_1",
    type: "message",
    role: "assistant",
    model,
    content: anthropicBlocks(reply),
    stop_reason: reply.toolCalls?.length ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

export function anthropicSseFrames(reply: ModelReply, model: string): SseFrame[] {
  const whole = anthropicMessage(reply, model);
  const frame = (event: string, data: Record<string, unknown>): SseFrame => ({ event, data: { type: event, ...data } });
  const frames = [frame("message_start", { message: { ...whole, content: [], stop_reason: null, usage: { input_tokens: usageOf(reply).input, output_tokens: 0 } } })];
  for (const [index, block] of anthropicBlocks(reply).entries()) {
    if (block.type === "text") {
      frames.push(frame("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const t of pieces(String(block.text))) frames.push(frame("content_block_delta", { index, delta: { type: "text_delta", text: t } }));
    } else {
      frames.push(frame("content_block_start", { index, content_block: { ...block, input: {} } }));
      for (const t of pieces(JSON.stringify(block.input), 8)) frames.push(frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: t } }));
    }
    frames.push(frame("content_block_stop", { index }));
  }
  frames.push(frame("message_delta", { delta: { stop_reason: whole.stop_reason, stop_sequence: null }, usage: { output_tokens: usageOf(reply).output } }));
  frames.push(frame("message_stop", {}));
  return frames;
}

// ── OpenAI Responses ─────────────────────────────────────────────────────────────────

function responseItems(reply: ModelReply): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  if (reply.content) {
    items.push({ type: "message", id: "msg_fake_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: reply.content, annotations: [] }] });
  }
  for (const [i, c] of (reply.toolCalls ?? []).entries()) {
    items.push({ type: "function_call", id: `fc_fake_${i}`, call_id: c.id ?? `call_${i}`, name: c.name, arguments: argsText(c.args), status: "completed" });
  }
  return items;
}

export function responsesResponse(reply: ModelReply, model: string): Record<string, unknown> {
  const usage = usageOf(reply);
  return {
    id: "resp_fake_1",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    model,
    output: responseItems(reply),
    usage: { input_tokens: usage.input, output_tokens: usage.output, total_tokens: usage.input + usage.output },
  };
}

export function responsesSseFrames(reply: ModelReply, model: string): SseFrame[] {
  const whole = responsesResponse(reply, model);
  let sequence = 0;
  const frames: SseFrame[] = [];
  const emit = (event: string, data: Record<string, unknown>) => frames.push({ event, data: { type: event, sequence_number: sequence++, ...data } });
  emit("response.created", { response: { ...whole, status: "in_progress", output: [], usage: null } });
  for (const [output_index, item] of responseItems(reply).entries()) {
    if (item.type === "message") {
      const text = String((item.content as { text: string }[])[0]!.text);
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      emit("response.content_part.added", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      for (const delta of pieces(text)) emit("response.output_text.delta", { item_id: item.id, output_index, content_index: 0, delta });
      emit("response.output_text.done", { item_id: item.id, output_index, content_index: 0, text });
      emit("response.content_part.done", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text, annotations: [] } });
    } else {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (const delta of pieces(String(item.arguments), 8)) emit("response.function_call_arguments.delta", { item_id: item.id, output_index, delta });
      emit("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.arguments });
    }
    emit("response.output_item.done", { output_index, item });
  }
  emit("response.completed", { response: whole });
  return frames;
}
