/**
 * POST /v1/responses bodies (OpenAI Responses API) → ProxyRequest, the third front door of the
 * same request machine. `input` items become the Message list chat and Anthropic produce:
 * `message` items (developer/system/user/assistant, text parts or a string), `function_call` and
 * `function_call_output` items; `reasoning` items are accepted and not replayed. The fields the
 * backend can use go on in OpenAI chat names (`max_output_tokens` → `max_tokens`,
 * `reasoning.effort` → `reasoning_effort`, `text.format` → `response_format`); the rest
 * (`include`, `prompt_cache_key`, `metadata`, `client_metadata`, ...) is accepted and ignored.
 *
 * The proxy is stateless: nothing is stored (`store: true` is accepted and answered with
 * `store: false`), so what refers to stored state — `previous_response_id`, `conversation`,
 * `background` — is a 400 that says to send the whole conversation instead.
 */
import { z } from "zod";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import { HttpError } from "../proxy-request/http-error.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { responseSchemaCheck } from "../proxy-request/request-tools.js";
import { decodeArgumentsField, parseWith } from "./request-body.js";
import { flatName, responsesTools, responsesToolChoice, type NamespacedName } from "./responses-tools.js";

const part = z.looseObject({ type: z.string() });
const messageItem = z.looseObject({ role: z.enum(["developer", "system", "user", "assistant"]), content: z.union([z.string(), z.array(part)]) });
const functionCall = z.looseObject({ call_id: z.string().min(1), name: z.string().min(1), arguments: z.string(), namespace: z.string().nullish() });
const functionCallOutput = z.looseObject({ call_id: z.string().min(1), output: z.union([z.string(), z.array(part)]) });
const textFormat = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({ type: z.literal("json_object") }),
  z.looseObject({ type: z.literal("json_schema"), name: z.string().min(1).max(64), schema: z.record(z.string(), z.unknown()), strict: z.boolean().nullish() }),
]);

export const responsesRequest = z.looseObject({
  model: z.string().nullish(),
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]),
  instructions: z.string().nullish(),
  tools: z.array(z.unknown()).nullish(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish(), summary: z.string().nullish() }).nullish(),
  text: z.looseObject({ format: textFormat.nullish() }).nullish(),
  previous_response_id: z.string().nullish(),
  conversation: z.unknown().optional(),
  background: z.boolean().nullish(),
});
type Body = z.infer<typeof responsesRequest>;

/** What the Responses renderer needs of the request beyond the ProxyRequest. */
export interface ResponsesShape {
  /** Flat backend name → the namespace and name the caller declared. */
  names: Record<string, NamespacedName>;
  /** Built-in tools left out of the backend request. */
  dropped: string[];
  /** The request's fields a `response` object repeats (instructions, tools, tool_choice, ...). */
  echo: Record<string, unknown>;
}

/**
 * @example
 * parseResponsesRequest({ model: "qwen3:8b", input: "hi" }).request.messages.length; // 1
 */
export function parseResponsesRequest(body: Record<string, unknown>): { request: ProxyRequest; shape: ResponsesShape } {
  const req = parseWith(responsesRequest, body);
  refuseStored(req);
  const offered = responsesTools(req.tools ?? []);
  const { toolChoice, tools } = responsesToolChoice(req.tool_choice, offered);
  const backend: Record<string, unknown> = {};
  if (req.max_output_tokens != null) backend.max_tokens = req.max_output_tokens;
  if (req.temperature != null) backend.temperature = req.temperature;
  if (req.top_p != null) backend.top_p = req.top_p;
  if (req.parallel_tool_calls != null) backend.parallel_tool_calls = req.parallel_tool_calls;
  if (typeof req.reasoning?.effort === "string") backend.reasoning_effort = req.reasoning.effort;
  const format = outputFormatOf(req.text?.format ?? undefined, backend);
  const request: ProxyRequest = {
    model: req.model ?? "",
    messages: toMessages(req),
    tools,
    toolChoice,
    stream: req.stream === true,
    includeUsage: true,
    body: backend,
    ...(format === undefined ? {} : { format }),
    ...(offered.dropped.length === 0 ? {} : { omittedTools: offered.dropped }),
  };
  return { request, shape: { names: offered.names, dropped: offered.dropped, echo: echoOf(req, body) } };
}

function refuseStored(req: Body): void {
  const stateless = "the forge-ts proxy is stateless and stores no responses or conversations; send the whole conversation in `input` (store: false)";
  if (req.previous_response_id != null) throw new HttpError(400, "invalid_request_error", `previous_response_id: ${stateless}`);
  if (req.conversation != null) throw new HttpError(400, "invalid_request_error", `conversation: ${stateless}`);
  if (req.background === true) throw new HttpError(400, "invalid_request_error", `background: ${stateless}, so a background response could never be fetched`);
}

/**
 * `text.format` → the format the answer is checked against, as chat's `response_format` is;
 * the backend gets it in chat's name too, so a server with grammar support constrains sampling.
 */
function outputFormatOf(format: z.infer<typeof textFormat> | undefined, backend: Record<string, unknown>): OutputFormat | undefined {
  if (format === undefined || format.type === "text") return undefined;
  if (format.type === "json_object") {
    backend.response_format = { type: "json_object" };
    return { kind: "json_object" };
  }
  responseSchemaCheck(format.schema);
  const strict = format.strict === true;
  backend.response_format = { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict } };
  return { kind: "json_schema", name: format.name, schema: format.schema, strict };
}

/** The fields OpenAI repeats in the response object, as the caller sent them (or OpenAI's defaults). */
function echoOf(req: Body, body: Record<string, unknown>): Record<string, unknown> {
  return {
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    store: false,
    temperature: req.temperature ?? null,
    text: { format: req.text?.format ?? { type: "text" } },
    tool_choice: req.tool_choice ?? "auto",
    tools: req.tools ?? [],
    top_p: req.top_p ?? null,
    truncation: typeof body.truncation === "string" ? body.truncation : "disabled",
    user: typeof body.user === "string" ? body.user : null,
  };
}

/** Text, image, file and audio parts: text passes; the rest become a visible placeholder (the backend gets text only). */
function partsText(content: string | z.infer<typeof part>[]): string {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  for (const p of content) {
    if ((p.type === "input_text" || p.type === "output_text" || p.type === "text") && typeof p.text === "string") texts.push(p.text);
    else if (p.type === "refusal" && typeof p.refusal === "string") texts.push(p.refusal);
    else if (p.type === "input_image" || p.type === "input_file" || p.type === "input_audio") texts.push(`[${p.type.slice(6)} omitted: the forge-ts proxy passes only text to its backend]`);
    // Any other part type is accepted and ignored (liberal in what clients send).
  }
  return texts.join("\n");
}

function toMessages(req: Body): Message[] {
  const items = typeof req.input === "string" ? [{ type: "message", role: "user", content: req.input }] : req.input;
  const messages: Message[] = [];
  // Leading instructions and developer/system items are one system prompt: chat templates want it first and once.
  const system: string[] = req.instructions ? [req.instructions] : [];
  const names = new Map<string, string>();
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    const type = item.type ?? "message";
    if (type === "message") {
      const m = parseWith(messageItem, item, at);
      const text = partsText(m.content);
      if (m.role === "developer" || m.role === "system") {
        if (messages.length === 0) system.push(text);
        else messages.push(createMessage("system", text, MessageType.SYSTEM_PROMPT));
      } else {
        flushSystem(messages, system);
        messages.push(createMessage(m.role, text, m.role === "user" ? MessageType.USER_INPUT : MessageType.TEXT_RESPONSE));
      }
    } else if (type === "function_call") {
      const call = parseWith(functionCall, item, at);
      flushSystem(messages, system);
      const name = call.namespace ? flatName(call.namespace, call.name) : call.name;
      names.set(call.call_id, name);
      appendCall(messages, { name, args: decodeArgumentsField(call.arguments, `${at}.arguments`), callId: call.call_id });
    } else if (type === "function_call_output") {
      const result = parseWith(functionCallOutput, item, at);
      flushSystem(messages, system);
      const name = names.get(result.call_id);
      const extra = name === undefined ? { toolCallId: result.call_id } : { toolCallId: result.call_id, toolName: name };
      messages.push(createMessage("tool", partsText(result.output), MessageType.TOOL_RESULT, extra));
    }
    // `reasoning` items are not replayed; other item types (item_reference, built-in tool
    // calls and their outputs) are accepted and ignored.
  });
  flushSystem(messages, system);
  if (!messages.some((m) => m.role !== "system")) throw new HttpError(400, "invalid_request_error", "input: at least one user, assistant or function_call_output item is required");
  return messages;
}

function flushSystem(messages: Message[], system: string[]): void {
  if (system.length === 0) return;
  messages.unshift(createMessage("system", system.splice(0).join("\n\n"), MessageType.SYSTEM_PROMPT));
}

/** Consecutive function_call items (and the assistant text before them) are one assistant turn. */
function appendCall(messages: Message[], call: { name: string; args: unknown; callId: string }): void {
  const last = messages.at(-1);
  if (last?.role === "assistant") {
    messages[messages.length - 1] = createMessage("assistant", last.content, MessageType.TOOL_CALL, { toolCalls: [...(last.toolCalls ?? []), call] });
    return;
  }
  messages.push(createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [call] }));
}
