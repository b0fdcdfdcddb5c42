/**
 * POST /v1/messages bodies (Anthropic Messages API) → ProxyRequest: system blocks, text,
 * tool_use and tool_result blocks become the same Message list the OpenAI side produces;
 * sampling fields are carried in OpenAI names for the backend client to map.
 */
import { z } from "zod";
import type { ToolChoice } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import { HttpError } from "./http-error.js";
import type { ProxyRequest } from "./proxy-request.js";
import { parseWith, textContent } from "./request-body.js";

const block = z.looseObject({ type: z.string() });
const message = z.looseObject({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(block)]) });
const tool = z.looseObject({
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  input_schema: z.record(z.string(), z.unknown(), "custom tools need an input_schema object (server tools are not supported)"),
});
const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.enum(["auto", "any", "none"]) }),
  z.looseObject({ type: z.literal("tool"), name: z.string().min(1) }),
]);
export const messagesRequest = z.looseObject({
  model: z.string().nullish(),
  max_tokens: z.number().int().positive(),
  messages: z.array(message).min(1, "at least one message is required"),
  system: z.union([z.string(), z.array(block)]).nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
});
type Block = z.infer<typeof block>;

const toolUse = z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string().min(1), input: z.unknown() });
const toolResult = z.looseObject({ type: z.literal("tool_result"), tool_use_id: z.string(), content: z.unknown().optional() });

/**
 * @example
 * parseMessagesRequest({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }] }).messages.length; // 1
 */
export function parseMessagesRequest(body: Record<string, unknown>): ProxyRequest {
  const req = parseWith(messagesRequest, body);
  const tools: ToolSpec[] = (req.tools ?? []).map((t) => ({ name: t.name, description: t.description ?? "", parameters: t.input_schema }));
  const choice = toolChoiceOf(req.tool_choice ?? undefined);
  if (typeof choice === "object" && !tools.some((t) => t.name === choice.function.name)) {
    throw new HttpError(400, "invalid_request_error", `tool_choice names "${choice.function.name}", which is not in tools`);
  }
  const messages: Message[] = [];
  if (req.system !== undefined && req.system !== null) {
    const system = textContent(req.system, "system");
    if (system !== "") messages.push(createMessage("system", system, MessageType.SYSTEM_PROMPT));
  }
  const names = new Map<string, string>();
  req.messages.forEach((m, i) => messages.push(...toMessages(m.role, m.content, `messages[${i}].content`, names)));
  const sampling: Record<string, unknown> = { max_tokens: req.max_tokens };
  if (req.temperature != null) sampling.temperature = req.temperature;
  if (req.top_p != null) sampling.top_p = req.top_p;
  if (req.top_k != null) sampling.top_k = req.top_k;
  if (req.stop_sequences != null) sampling.stop = req.stop_sequences;
  return { model: req.model ?? "", messages, tools, toolChoice: choice, stream: req.stream === true, includeUsage: true, body: sampling };
}

function toolChoiceOf(choice: z.infer<typeof toolChoice> | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice.type === "tool") return { type: "function", function: { name: choice.name } };
  return choice.type === "any" ? "required" : choice.type;
}

function toMessages(role: "user" | "assistant", content: string | Block[], where: string, names: Map<string, string>): Message[] {
  if (typeof content === "string") {
    return [createMessage(role, content, role === "user" ? MessageType.USER_INPUT : MessageType.TEXT_RESPONSE)];
  }
  const out: Message[] = [];
  const texts: Block[] = [];
  const calls: { name: string; args: unknown; callId: string }[] = [];
  content.forEach((b, j) => {
    const at = `${where}[${j}]`;
    if (b.type === "thinking" || b.type === "redacted_thinking") return; // reasoning is not replayed
    if (b.type === "text") texts.push(b);
    else if (role === "assistant" && b.type === "tool_use") {
      const use = parseWith(toolUse, b, at);
      names.set(use.id, use.name);
      calls.push({ name: use.name, args: use.input ?? {}, callId: use.id });
    } else if (role === "user" && b.type === "tool_result") {
      const result = parseWith(toolResult, b, at);
      const text = textContent(result.content ?? "", `${at}.content`);
      const name = names.get(result.tool_use_id);
      const extra = name === undefined ? { toolCallId: result.tool_use_id } : { toolCallId: result.tool_use_id, toolName: name };
      out.push(createMessage("tool", text, MessageType.TOOL_RESULT, extra));
    } else {
      throw new HttpError(400, "invalid_request_error", `${at}: "${b.type}" blocks are not supported by the forge-ts proxy in ${role} messages`);
    }
  });
  const text = textContent(texts, where);
  if (role === "assistant") {
    out.push(calls.length > 0 ? createMessage("assistant", text, MessageType.TOOL_CALL, { toolCalls: calls }) : createMessage("assistant", text, MessageType.TEXT_RESPONSE));
  } else if (texts.length > 0 || out.length === 0) {
    out.push(createMessage("user", text, MessageType.USER_INPUT));
  }
  return out;
}
