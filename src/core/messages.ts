/**
 * Messages are plain JSON objects: the machine context holds them and snapshots persist them.
 * Metadata (`meta`) drives compaction and observability and never reaches the wire; the
 * serializers in wire-messages.ts are the only place that produces backend dicts, and
 * json-value.ts checks that data is plain JSON.
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

/** The text of a message as a reader (or the token estimator) sees it, tool calls included. */
export function messageText(message: Message): string {
  if (!message.toolCalls?.length) return message.content;
  const calls = message.toolCalls.map((c) => `${c.name}(${typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {})})`).join("\n");
  return message.content ? `${message.content}\n${calls}` : calls;
}
