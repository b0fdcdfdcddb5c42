/**
 * What a model "says", rendered in each backend's real wire format: Ollama /api/chat JSON and
 * NDJSON lines, OpenAI chat.completion JSON and chat.completion.chunk SSE events.
 */

export interface ModelReply {
  content?: string;
  /** Server-side reasoning (Ollama `thinking`, llama-server `reasoning_content`). */
  reasoning?: string;
  /** `args` as a string is sent verbatim as the OpenAI `arguments` string. */
  toolCalls?: { name: string; args: unknown; id?: string }[];
  usage?: { input: number; output: number };
}

/** Split text into small pieces so streams carry several deltas. */
export function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// ── Ollama ───────────────────────────────────────────────────────────────────────────

export function ollamaMessage(reply: ModelReply): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: reply.content ?? "" };
  if (reply.reasoning !== undefined) message.thinking = reply.reasoning;
  if (reply.toolCalls?.length) message.tool_calls = reply.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.args } }));
  return message;
}

export function ollamaChat(reply: ModelReply, model = "test-model"): Record<string, unknown> {
  return {
    model,
    created_at: "2026-01-01T00:00:00Z",
    message: ollamaMessage(reply),
    done_reason: "stop",
    done: true,
    total_duration: 1000,
    prompt_eval_count: reply.usage?.input ?? 11,
    eval_count: reply.usage?.output ?? 7,
  };
}

export function ollamaStreamLines(reply: ModelReply, model = "test-model"): Record<string, unknown>[] {
  const line = (message: Record<string, unknown>) => ({ model, created_at: "2026-01-01T00:00:00Z", message, done: false });
  const lines: Record<string, unknown>[] = [
    ...pieces(reply.reasoning ?? "").map((t) => line({ role: "assistant", content: "", thinking: t })),
    ...pieces(reply.content ?? "").map((t) => line({ role: "assistant", content: t })),
  ];
  if (reply.toolCalls?.length) lines.push(line({ role: "assistant", content: "", tool_calls: ollamaMessage(reply).tool_calls }));
  const final = ollamaChat({ usage: reply.usage ?? { input: 11, output: 7 } }, model);
  final.message = { role: "assistant", content: "" };
  lines.push(final);
  return lines;
}

// ── OpenAI-compatible ────────────────────────────────────────────────────────────────

function wireArgs(args: unknown): string {
  return typeof args === "string" ? args : JSON.stringify(args);
}

export function openaiCompletion(reply: ModelReply, model = "test-model"): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: reply.content ?? null };
  if (reply.reasoning !== undefined) message.reasoning_content = reply.reasoning;
  if (reply.toolCalls?.length) {
    message.tool_calls = reply.toolCalls.map((c, i) => ({ id: c.id ?? `call_${i}`, type: "function", function: { name: c.name, arguments: wireArgs(c.args) } }));
  }
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, finish_reason: reply.toolCalls?.length ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: reply.usage?.input ?? 11, completion_tokens: reply.usage?.output ?? 7, total_tokens: (reply.usage?.input ?? 11) + (reply.usage?.output ?? 7) },
  };
}

export function openaiSseEvents(reply: ModelReply, model = "test-model"): Record<string, unknown>[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: Record<string, unknown>[] = [chunk({ role: "assistant", content: null })];
  for (const t of pieces(reply.reasoning ?? "")) events.push(chunk({ reasoning_content: t }));
  for (const t of pieces(reply.content ?? "")) events.push(chunk({ content: t }));
  for (const [index, c] of (reply.toolCalls ?? []).entries()) {
    events.push(chunk({ tool_calls: [{ index, id: c.id ?? `call_${index}`, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const t of pieces(wireArgs(c.args), 5)) events.push(chunk({ tool_calls: [{ index, function: { arguments: t } }] }));
  }
  events.push(chunk({}, reply.toolCalls?.length ? "tool_calls" : "stop"));
  const input = reply.usage?.input ?? 11;
  const output = reply.usage?.output ?? 7;
  events.push({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } });
  return events;
}
