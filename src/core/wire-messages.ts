/**
 * Messages as each backend's wire format wants them: the serializers are the only place that
 * produces backend dicts (`meta` never reaches the wire).
 */
import { isPlainObject } from "./json-value.js";
import { MessageType, type Message, type MessageRole, type ToolCallInfo } from "./messages.js";

export type ApiFormat = "ollama" | "openai";

/** Ollama /api/chat message. */
export interface OllamaWireMessage {
  role: MessageRole;
  content: string;
  tool_calls?: { function: { name: string; arguments: Record<string, unknown> } }[];
  tool_name?: string;
  [extra: string]: unknown;
}

/** OpenAI chat-completions message (also llama-server, vLLM, LM Studio). */
export interface OpenAIWireMessage {
  role: MessageRole;
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
  [extra: string]: unknown;
}

export type WireMessage = OllamaWireMessage | OpenAIWireMessage;

/** How much captured reasoning is sent back to the backend. */
export type ReasoningReplay = "none" | "keep-last" | "full";

/**
 * Backends want an object for `arguments` (Ollama's schema; llama-server parses the OpenAI
 * string for its chat template and answers 500 on invalid JSON). A call whose args were not an
 * object has already been answered with a tool error; its history entry keeps the raw value
 * visibly instead of pretending it was `{}`.
 *
 * @example
 * objectArgs('{"city":'); // { _invalid_arguments: '{"city":' }
 */
export function objectArgs(args: unknown): Record<string, unknown> {
  return isPlainObject(args) ? args : { _invalid_arguments: args ?? null };
}

function openaiArgs(args: unknown): string {
  return JSON.stringify(objectArgs(args));
}

/** Serialize one message for the wire, stripping metadata. */
export function toApiMessage(message: Message, format: ApiFormat): WireMessage {
  if (format === "ollama") {
    const out: OllamaWireMessage = { role: message.role, content: message.content };
    if (message.toolCalls?.length) {
      out.tool_calls = message.toolCalls.map((c) => ({ function: { name: c.name, arguments: objectArgs(c.args) } }));
    }
    if (message.role === "tool" && message.toolName !== undefined) out.tool_name = message.toolName;
    return out;
  }
  const out: OpenAIWireMessage = { role: message.role, content: message.content };
  if (message.toolCalls?.length) {
    out.tool_calls = message.toolCalls.map((c) => ({
      id: c.callId,
      type: "function",
      function: { name: c.name, arguments: openaiArgs(c.args) },
    }));
  }
  if (message.role === "tool") {
    if (message.toolCallId !== undefined) out.tool_call_id = message.toolCallId;
    if (message.toolName !== undefined) out.name = message.toolName;
  }
  return out;
}

/**
 * Serialize a history for the backend. REASONING messages never go out on their own: per
 * `reasoningReplay` they are folded into the content of the assistant message that follows
 * them ("full": all of them, "keep-last": only the latest, "none": dropped), which keeps
 * the wire alternation valid while the internal list keeps them separate for compaction.
 * SUMMARY messages are folded into the leading system message, and (openai format) every
 * tool-call id gets a result right after its call message.
 */
export function serializeMessages(
  messages: readonly Message[],
  format: ApiFormat,
  options: { reasoningReplay?: ReasoningReplay } = {},
): WireMessage[] {
  const replay = options.reasoningReplay ?? "none";
  let lastReasoning = -1;
  if (replay === "keep-last") {
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.meta.type === MessageType.REASONING) {
        lastReasoning = i;
        break;
      }
    }
  }
  const out: WireMessage[] = [];
  let pending: string[] = [];
  // OpenAI-style servers reject a tool_calls message whose ids are not all answered by tool
  // messages right after it; compaction may have dropped old results, so stand-ins go there.
  let unanswered: ToolCallInfo[] = [];
  const closeCalls = () => {
    for (const c of unanswered) out.push(droppedResultStandIn(c));
    unanswered = [];
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.meta.type === MessageType.REASONING) {
      if (replay === "full" || (replay === "keep-last" && i === lastReasoning)) pending.push(m.content);
      continue;
    }
    if (m.meta.type === MessageType.SUMMARY && out[0]?.role === "system") {
      // Many chat templates (Gemma, Mistral) refuse a system message after the first turn:
      // compaction summaries travel inside the leading system prompt instead.
      out[0] = { ...out[0], content: [out[0].content, m.content].filter((x) => x).join("\n\n") };
      continue;
    }
    if (format === "openai") {
      if (m.role === "tool") unanswered = unanswered.filter((c) => c.callId !== m.toolCallId);
      else closeCalls();
      if (m.toolCalls?.length) unanswered = [...m.toolCalls];
    }
    const wire = wireMessageOf(m, format);
    if (pending.length > 0 && m.role === "assistant") {
      const folded = [...pending, m.content].filter((s) => s.length > 0).join("\n\n");
      out.push({ ...wire, content: folded });
      pending = [];
    } else {
      out.push(wire);
    }
  }
  closeCalls();
  return out;
}

/** Content of a stand-in result for a call whose result compaction removed. */
export const DROPPED_RESULT = "[Result removed from the context to save space]";

/** The OpenAI-wire tool message that answers a call whose result compaction removed. */
export function droppedResultStandIn(call: ToolCallInfo): OpenAIWireMessage {
  return { role: "tool", content: DROPPED_RESULT, tool_call_id: call.callId, name: call.name };
}

/**
 * The loop serializes the whole history on every call; messages never change, so each one's
 * wire form is built once per format. Cached forms are frozen: a client that tried to edit
 * one in place would corrupt every later request, so it fails loudly instead.
 */
const wireCache = { ollama: new WeakMap<Message, WireMessage>(), openai: new WeakMap<Message, WireMessage>() };
export function wireMessageOf(message: Message, format: ApiFormat): WireMessage {
  const cache = wireCache[format];
  let wire = cache.get(message);
  if (!wire) {
    wire = Object.freeze(toApiMessage(message, format));
    cache.set(message, wire);
  }
  return wire;
}
