/**
 * POST /v1/messages bodies (Anthropic Messages API) → ProxyRequest: system blocks, text,
 * tool_use and tool_result blocks become the same Message list the OpenAI side produces;
 * sampling fields are carried in OpenAI names for the backend client to map.
 *
 * What Anthropic harnesses (Claude Code) add is accepted and not sent on: `cache_control` on
 * any block or tool, `metadata`, `thinking`, `context_management`, `output_config`,
 * `service_tier` and the like; `thinking` blocks (and their signatures) in assistant turns, and
 * `is_error` on tool results (the result text itself carries the error). `thinking` is not
 * mapped to the backend's reasoning switch: Claude Code sends it on nearly every request, and
 * whether a local model thinks is the backend client's setting (`think`), not the caller's.
 */
import { z } from "zod";
import type { ToolChoice } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import { HttpError } from "../proxy-request/http-error.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { parseWith, textContent } from "./request-body.js";
import { responseSchemaCheck } from "../proxy-request/request-tools.js";

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
  const failed: string[] = [];
  req.messages.forEach((m, i) => messages.push(...toMessages(m.role, m.content, `messages[${i}].content`, names, failed)));
  const request: ProxyRequest = { model: req.model ?? "", messages, tools, toolChoice: choice, stream: req.stream === true, includeUsage: true, body: {} };
  return failed.length > 0 ? { ...request, failedCallIds: failed } : request;
}

function toolChoiceOf(choice: z.infer<typeof toolChoice> | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice.type === "tool") return { type: "function", function: { name: choice.name } };
  return choice.type === "any" ? "required" : choice.type;
}

/** `failed` collects the ids of tool results flagged `is_error` (workflow policy reads them). */
function toMessages(role: "user" | "assistant", content: string | Block[], where: string, names: Map<string, string>, failed: string[]): Message[] {
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
      if (Array.isArray(result.content)) {
        result.content.forEach((part: { type?: unknown }, k) => {
          if (part?.type !== "text") throw unsupportedBlock(`${at}.content[${k}]`, String(part?.type), "tool results");
        });
      }
      if (result.is_error === true) failed.push(result.tool_use_id);
      const text = textContent(result.content ?? "", `${at}.content`);
      const name = names.get(result.tool_use_id);
      const extra = name === undefined ? { toolCallId: result.tool_use_id } : { toolCallId: result.tool_use_id, toolName: name };
      out.push(createMessage("tool", text, MessageType.TOOL_RESULT, extra));
    } else {
      throw unsupportedBlock(at, b.type, `${role} messages`);
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

/** A 400 for a block the proxy cannot pass on, saying what to send instead. */
function unsupportedBlock(at: string, type: string, where: string): HttpError {
  return new HttpError(400, "invalid_request_error", `${at}: "${type}" blocks are not supported by the forge-ts proxy in ${where}: ${unsupportedHint(type, where)}`);
}

function unsupportedHint(type: string, where: string): string {
  if (type === "image" || type === "document") {
    return "the proxy passes only text to its backend; send the content as text blocks (the document's text, a description of the image), or call a vision-capable model directly";
  }
  if (type.startsWith("server_tool") || type.endsWith("_tool_result") || type.endsWith("_tool_use")) {
    return "server tools run at Anthropic; define the tool with an input_schema and send its result as a tool_result";
  }
  return where === "tool results" ? "a tool result's content may hold text blocks only" : "send text, tool_use (assistant) or tool_result (user) blocks";
}
