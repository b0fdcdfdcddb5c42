/**
 * POST /v1/messages bodies (Anthropic Messages API) → ProxyRequest: system blocks, text,
 * tool_use and tool_result blocks become the same Message list the OpenAI side produces;
 * sampling fields are carried in OpenAI names for the backend client to map.
 *
 * Liberal in what it accepts, because one new field from a client must not break every user
 * at once: unknown top-level fields are accepted and not sent on (`metadata`, `thinking`,
 * `context_management`, `output_config` but its `format`, `service_tier`, `container`, ...),
 * as are `cache_control` anywhere, `thinking` blocks (and signatures) in assistant turns and
 * `is_error` on tool results (the result text itself carries the error). Block types the
 * proxy does not act on are left out, media become a placeholder (content-parts.ts), and
 * server and deferred tools are handled in anthropic-tools.ts. What the proxy does read
 * (roles, tool_use and tool_result fields, tool schemas, tool_choice) stays a 400 when
 * malformed. `thinking` and `output_config.effort` are not mapped to the backend's reasoning
 * switch: Claude Code sends them on nearly every request, and whether a local model thinks is
 * the backend client's setting (`think`), not the caller's.
 *
 * `system`-role messages inside `messages` (today's Claude Code sends its environment block
 * as one) are folded into the one leading system prompt, in the order they appear: many chat
 * templates (Gemma, Mistral) refuse a system turn after the first, as wire-messages.ts notes
 * for summaries, and Claude Code keeps that message at the same place on every turn, so the
 * folded prompt stays a stable prefix for the backend's prompt cache.
 */
import { z } from "zod";
import type { ToolChoice } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import { HttpError } from "../proxy-request/http-error.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { partText } from "./content-parts.js";
import { decodeArgumentsField, parseWith, textContent } from "./request-body.js";
import { responseSchemaCheck } from "../proxy-request/request-tools.js";
import { anthropicTool, backendTools, referencedTools } from "./anthropic-tools.js";

const block = z.looseObject({ type: z.string() });
const message = z.looseObject({ role: z.enum(["user", "assistant", "system"]), content: z.union([z.string(), z.array(block)]) });
const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.enum(["auto", "any", "none"]) }),
  z.looseObject({ type: z.literal("tool"), name: z.string().min(1) }),
]);
export const messagesRequest = z.looseObject({
  model: z.string().nullish(),
  max_tokens: z.number().int().positive(),
  messages: z.array(message).min(1, "at least one message is required"),
  system: z.union([z.string(), z.array(block)]).nullish(),
  tools: z.array(anthropicTool).nullish(),
  tool_choice: toolChoice.nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
});
/** POST /v1/messages/count_tokens: the same body without `max_tokens`. */
export const countTokensRequest = messagesRequest.omit({ max_tokens: true });
type Block = z.infer<typeof block>;

const toolUse = z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string().min(1), input: z.unknown() });
const toolResult = z.looseObject({ type: z.literal("tool_result"), tool_use_id: z.string(), content: z.unknown().optional(), is_error: z.boolean().nullish() });

/**
 * @example
 * parseMessagesRequest({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }] }).messages.length; // 1
 */
export function parseMessagesRequest(body: Record<string, unknown>): ProxyRequest {
  const req = parseWith(messagesRequest, body);
  const sampling: Record<string, unknown> = { max_tokens: req.max_tokens };
  if (req.temperature != null) sampling.temperature = req.temperature;
  if (req.top_p != null) sampling.top_p = req.top_p;
  if (req.top_k != null) sampling.top_k = req.top_k;
  if (req.stop_sequences != null) sampling.stop = req.stop_sequences;
  const request = toProxyRequest(req);
  const format = outputFormatOf(body);
  if (format === undefined) return { ...request, body: sampling };
  // The backend gets it in OpenAI's name too, so a server with grammar support can constrain sampling.
  sampling.response_format = { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict: true } };
  return { ...request, body: sampling, format };
}

const jsonFormat = z.looseObject({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()) });

/**
 * Structured outputs: `output_config.format` (GA) or the beta's top-level `output_format`,
 * both `{ type: "json_schema", schema }`. A schema that does not compile is the caller's 400.
 */
function outputFormatOf(body: Record<string, unknown>): Extract<OutputFormat, { kind: "json_schema" }> | undefined {
  const config = body.output_config;
  const raw = config !== null && typeof config === "object" && "format" in config ? (config as { format: unknown }).format : body.output_format;
  if (raw === undefined || raw === null) return undefined;
  const where = body.output_format === raw ? "output_format" : "output_config.format";
  const { schema } = parseWith(jsonFormat, raw, where);
  responseSchemaCheck(schema);
  return { kind: "json_schema", name: "output", schema, strict: true };
}

/**
 * A count_tokens body as a ProxyRequest (no `max_tokens`; sampling fields are dropped, they
 * do not change the input's size).
 *
 * @example
 * parseCountTokensRequest({ model: "m", messages: [{ role: "user", content: "hi" }] }).messages.length; // 1
 */
export function parseCountTokensRequest(body: Record<string, unknown>): ProxyRequest {
  return toProxyRequest(parseWith(countTokensRequest, body));
}

/** Everything but the sampling fields, shared by both endpoints. */
function toProxyRequest(req: z.infer<typeof countTokensRequest>): ProxyRequest {
  const { tools, omitted } = backendTools(req.tools ?? [], referencedTools(req.messages));
  const choice = toolChoiceOf(req.tool_choice ?? undefined);
  if (typeof choice === "object" && !tools.some((t) => t.name === choice.function.name)) {
    const why = omitted.includes(choice.function.name) ? "a server or unloaded deferred tool, which the forge-ts proxy does not send to its backend" : "which is not in tools";
    throw new HttpError(400, "invalid_request_error", `tool_choice names "${choice.function.name}", ${why}`);
  }
  const system: string[] = [];
  if (req.system !== undefined && req.system !== null) system.push(textContent(req.system, "system"));
  const messages: Message[] = [];
  const names = new Map<string, string>();
  const failed: string[] = [];
  req.messages.forEach((m, i) => {
    const where = `messages[${i}].content`;
    if (m.role === "system") system.push(textContent(m.content, where));
    else messages.push(...toMessages(m.role, m.content, where, names, failed));
  });
  const prompt = system.filter((s) => s !== "").join("\n\n");
  if (prompt !== "") messages.unshift(createMessage("system", prompt, MessageType.SYSTEM_PROMPT));
  const request: ProxyRequest = { model: req.model ?? "", messages, tools, toolChoice: choice, stream: req.stream === true, includeUsage: true, body: {} };
  if (omitted.length > 0) request.omittedTools = omitted;
  if (failed.length > 0) request.failedCallIds = failed;
  return request;
}

function toolChoiceOf(choice: z.infer<typeof toolChoice> | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice.type === "tool") return { type: "function", function: { name: choice.name } };
  return choice.type === "any" ? "required" : choice.type;
}

/**
 * One user or assistant turn. `failed` collects the ids of tool results flagged `is_error`
 * (workflow policy reads them). Blocks other than text, tool_use and tool_result go through
 * `partText`: media become placeholders, the rest (thinking, server-tool blocks, anything
 * newer) is left out.
 */
function toMessages(role: "user" | "assistant", content: string | Block[], where: string, names: Map<string, string>, failed: string[]): Message[] {
  if (typeof content === "string") {
    return [createMessage(role, content, role === "user" ? MessageType.USER_INPUT : MessageType.TEXT_RESPONSE)];
  }
  const out: Message[] = [];
  const texts: string[] = [];
  const calls: { name: string; args: unknown; callId: string }[] = [];
  content.forEach((b, j) => {
    const at = `${where}[${j}]`;
    if (b.type === "tool_use") {
      if (role !== "assistant") throw misplaced(at, b.type, "assistant");
      const use = parseWith(toolUse, b, at);
      names.set(use.id, use.name);
      // An object as the API defines it; a JSON string (what a client that kept the streamed
      // input_json_delta text sends) is decoded like the other doors' arguments.
      calls.push({ name: use.name, args: decodeArgumentsField(use.input ?? {}, `${at}.input`), callId: use.id });
    } else if (b.type === "tool_result") {
      if (role !== "user") throw misplaced(at, b.type, "user");
      const result = parseWith(toolResult, b, at);
      if (result.is_error === true) failed.push(result.tool_use_id);
      const text = textContent(result.content ?? "", `${at}.content`);
      const name = names.get(result.tool_use_id);
      const extra = name === undefined ? { toolCallId: result.tool_use_id } : { toolCallId: result.tool_use_id, toolName: name };
      out.push(createMessage("tool", text, MessageType.TOOL_RESULT, extra));
    } else if (b.type !== "thinking" && b.type !== "redacted_thinking") {
      // Reasoning is not replayed; everything else is text, a placeholder or nothing.
      const text = partText(b, at);
      if (text !== undefined) texts.push(text);
    }
  });
  const text = texts.join("\n");
  if (role === "assistant") {
    out.push(calls.length > 0 ? createMessage("assistant", text, MessageType.TOOL_CALL, { toolCalls: calls }) : createMessage("assistant", text, MessageType.TEXT_RESPONSE));
  } else if (texts.length > 0 || out.length === 0) {
    out.push(createMessage("user", text, MessageType.USER_INPUT));
  }
  return out;
}

/** A call or result in the other side's turn is malformed history, not something to skip. */
function misplaced(at: string, type: string, role: string): HttpError {
  return new HttpError(400, "invalid_request_error", `${at}: "${type}" blocks belong in ${role} messages`);
}
