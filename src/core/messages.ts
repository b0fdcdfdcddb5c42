/**
 * Messages are plain JSON objects: the machine context holds them and snapshots persist them.
 * Metadata (`meta`) drives compaction and observability and never reaches the wire; the
 * serializers below are the only place that produces backend dicts.
 */
import { z } from "zod";

export const MessageRole = {
  SYSTEM: "system",
  USER: "user",
  ASSISTANT: "assistant",
  TOOL: "tool",
} as const;
export type MessageRole = (typeof MessageRole)[keyof typeof MessageRole];

/** Compaction and observability tag (seed 001's message-type table). */
export const MessageType = {
  SYSTEM_PROMPT: "system_prompt",
  USER_INPUT: "user_input",
  TOOL_CALL: "tool_call",
  TOOL_RESULT: "tool_result",
  REASONING: "reasoning",
  TEXT_RESPONSE: "text_response",
  STEP_NUDGE: "step_nudge",
  PREREQUISITE_NUDGE: "prerequisite_nudge",
  RETRY_NUDGE: "retry_nudge",
  SUMMARY: "summary",
} as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

export const NUDGE_TYPES: ReadonlySet<MessageType> = new Set([
  MessageType.STEP_NUDGE,
  MessageType.PREREQUISITE_NUDGE,
  MessageType.RETRY_NUDGE,
]);

export interface MessageMeta {
  type: MessageType;
  /** The loop iteration that produced the message (compaction groups by it). */
  stepIndex?: number;
  /** For summaries and truncations: what the message was before. */
  originalType?: MessageType;
  tokenEstimate?: number;
}

/** One call inside an assistant tool-call message. `args` is kept as the model sent it. */
export interface ToolCallInfo {
  name: string;
  args: unknown;
  callId: string;
}

export interface Message {
  role: MessageRole;
  content: string;
  meta: MessageMeta;
  /** role "tool": which tool produced the result. */
  toolName?: string;
  /** role "tool": the call this result answers. */
  toolCallId?: string;
  /** role "assistant", type tool_call: one entry per call in the batch. */
  toolCalls?: ToolCallInfo[];
}

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

export function createMessage(
  role: MessageRole,
  content: string,
  type: MessageType,
  extra: Omit<Partial<Message>, "role" | "content" | "meta"> & { stepIndex?: number } = {},
): Message {
  const { stepIndex, ...rest } = extra;
  const meta: MessageMeta = stepIndex === undefined ? { type } : { type, stepIndex };
  return { role, content, meta, ...rest };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const MESSAGE_TYPES = Object.values(MessageType) as [MessageType, ...MessageType[]];

/**
 * The runtime shape of a {@link Message} (unknown extra fields pass through). Checked where
 * messages enter from outside: `initialMessages`, persisted snapshots.
 *
 * @example
 * MessageSchema.safeParse({ role: "user", content: "hi", meta: { type: "user_input" } }).success; // true
 */
export const MessageSchema = z.looseObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
  meta: z.looseObject({
    type: z.enum(MESSAGE_TYPES),
    stepIndex: z.number().int().nonnegative().optional(),
    originalType: z.enum(MESSAGE_TYPES).optional(),
    tokenEstimate: z.number().nonnegative().optional(),
  }),
  toolName: z.string().optional(),
  toolCallId: z.string().optional(),
  toolCalls: z.array(z.looseObject({ name: z.string(), args: z.unknown(), callId: z.string() })).optional(),
});

/**
 * Deepest nesting accepted in data the loop stores as JSON (context, snapshots). Deeper values
 * overflow the stack of recursive JSON code (JSON.stringify, structuredClone, ajv) with a
 * RangeError far from where they came in.
 *
 * @example
 * jsonIssue(value, MAX_JSON_DEPTH) === undefined; // safe to keep in the machine context
 */
export const MAX_JSON_DEPTH = 512;
const MAX_JSON_VALUES = 1_000_000;

function className(proto: unknown): string {
  try {
    const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === "string" && name ? name : "non-plain object";
  } catch {
    return "non-plain object";
  }
}

type Visit = { value: unknown; depth: number; parent?: Visit; key?: string | number };

function visitPath(visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let v: Visit | undefined = visit; v?.parent; v = v.parent) keys.push(v.key!);
  const path = keys.reverse().map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("");
  return path ? path.replace(/^\./, "") : "(root)";
}

/**
 * Why `value` is not plain JSON (a BigInt, function or symbol, a non-finite number, an object
 * that is not a plain object or array, a cycle, nesting deeper than `maxDepth`), or undefined
 * when it is. Iterative, so hostile depth cannot overflow the stack here. `undefined` is
 * accepted (JSON.stringify drops it).
 *
 * @example
 * jsonIssue({ a: 1n }); // "a bigint at a"
 * jsonIssue({ a: [1, "x", null] }); // undefined
 */
export function jsonIssue(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  // The loop checks every model answer: small clean values are confirmed by a quick recursive
  // look; anything else (a problem to word, a big or deep value) gets the careful walk below.
  fastBudget = FAST_VALUES;
  try {
    if (isClearlyJson(value, 0, Math.min(maxDepth, FAST_DEPTH))) return undefined;
  } catch {
    // a throwing getter or proxy: the walk below reports it as it always did
  }
  return walkJsonIssue(value, maxDepth);
}

/** jsonIssue's careful walk (no quick look first): exported for the test that holds the two equal. */
export function walkJsonIssue(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  const stack: Visit[] = [{ value, depth: 0 }];
  let count = 0;
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (++count > MAX_JSON_VALUES) return `more than ${MAX_JSON_VALUES} values`;
    if (v === null || v === undefined || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return `${v} at ${visitPath(visit)} (not a JSON number)`;
      continue;
    }
    if (typeof v !== "object") return `a ${typeof v} at ${visitPath(visit)}`;
    // A cycle also ends here: its depth grows without bound.
    if (visit.depth >= maxDepth) return `nesting deeper than ${maxDepth} levels (or a cycle) at ${visitPath(visit)}`;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth: visit.depth + 1, parent: visit, key: i });
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      return `a ${className(proto)} at ${visitPath(visit)}`;
    }
    let entries: [string, unknown][];
    try {
      entries = Object.entries(v);
    } catch (error) {
      return `an unreadable property at ${visitPath(visit)} (${error instanceof Error ? error.message : "getter threw"})`;
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      stack.push({ value: child, depth: visit.depth + 1, parent: visit, key });
    }
  }
  return undefined;
}

const FAST_DEPTH = 64;
const FAST_VALUES = 10_000;
let fastBudget = 0;

/** True only for what jsonIssue's walk passes (within FAST_DEPTH and FAST_VALUES); false: look closer. */
function isClearlyJson(v: unknown, depth: number, maxDepth: number): boolean {
  if (--fastBudget < 0) return false;
  if (v === null || v === undefined || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || depth >= maxDepth) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isClearlyJson(v[i], depth + 1, maxDepth)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(v)) if (!isClearlyJson((v as Record<string, unknown>)[key], depth + 1, maxDepth)) return false;
  return true;
}

/**
 * Backends want an object for `arguments` (Ollama's schema; llama-server parses the OpenAI
 * string for its chat template and answers 500 on invalid JSON). A call whose args were not an
 * object has already been answered with a tool error; its history entry keeps the raw value
 * visibly instead of pretending it was `{}`.
 */
function objectArgs(args: unknown): Record<string, unknown> {
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

/** The text of a message as a reader (or the token estimator) sees it, tool calls included. */
export function messageText(message: Message): string {
  if (!message.toolCalls?.length) return message.content;
  const calls = message.toolCalls.map((c) => `${c.name}(${typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {})})`).join("\n");
  return message.content ? `${message.content}\n${calls}` : calls;
}
