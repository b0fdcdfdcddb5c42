/**
 * POST /api/chat bodies (Ollama's native API, api/types.go `ChatRequest`) → ProxyRequest: the
 * same Message list the other doors produce, with Ollama's fields in the names the backend
 * clients map — `options` that have an OpenAI name (`num_predict`, `temperature`, `stop`, …) in
 * that name, so a llama-server or vLLM behind this door gets them too; Ollama's own (`num_ctx`,
 * `mirostat`, …), `keep_alive` and a boolean `think` as they are, for an Ollama backend only;
 * `format` as `response_format` (and checked like it); a `think` level as `reasoning_effort`.
 *
 * Liberal where Ollama is: unknown fields anywhere are accepted, `stream` defaults to true, a
 * missing model means the proxy's default, tool-call `arguments` may be an object or a JSON
 * string, and a tool result without a `tool_call_id` answers the next unanswered call of the
 * turn before it (by `tool_name` when it has one), as Ollama's chat templates read them.
 * Images become the placeholder line the other doors use (the backend is sent text only), and
 * an assistant turn's `thinking` is not replayed (as on the Anthropic door).
 */
import { z } from "zod";
import { splitOllamaOptions } from "../clients/request-overrides.js";
import { isPlainObject } from "../core/json-value.js";
import { createMessage, MessageType, type Message, type ToolCallInfo } from "../core/messages.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { responseSchemaCheck } from "../proxy-request/request-tools.js";
import { mediaPlaceholder } from "./content-parts.js";
import { functionTools } from "./openai-request.js";
import { decodeArgumentsField, parseWith, textContent } from "./request-body.js";

const toolCall = z.looseObject({
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.unknown().optional() }),
});
const message = z.looseObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  // A string in Ollama's API; some clients send a list of parts (`[]` beside images).
  content: z.union([z.string(), z.array(z.unknown())]).nullish(),
  images: z.array(z.unknown()).nullish(),
  tool_calls: z.array(toolCall).nullish(),
  tool_name: z.string().nullish(),
  tool_call_id: z.string().nullish(),
});
export const ollamaChatRequest = z.looseObject({
  model: z.string().nullish(),
  // An empty list (Ollama's load of a model) is answered before this door (ollama-api.ts).
  messages: z.array(message).min(1, "at least one message is required"),
  tools: z.array(z.looseObject({ type: z.string().optional() })).nullish(),
  stream: z.boolean().nullish(),
  format: z.union([z.literal(""), z.literal("json"), z.record(z.string(), z.unknown())]).nullish(),
  think: z.union([z.boolean(), z.enum(["low", "medium", "high"])]).nullish(),
  options: z.record(z.string(), z.unknown()).nullish(),
  keep_alive: z.union([z.string(), z.number()]).nullish(),
});

/**
 * @example
 * parseOllamaChatRequest({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] }).stream; // true
 */
export function parseOllamaChatRequest(body: Record<string, unknown>): ProxyRequest {
  const req = parseWith(ollamaChatRequest, body);
  const { tools, omitted } = functionTools(req.tools ?? []);
  const passThrough: Record<string, unknown> = {};
  if (req.options != null) {
    const { openai, rest } = splitOllamaOptions(req.options);
    Object.assign(passThrough, openai);
    if (Object.keys(rest).length > 0) passThrough.options = rest;
  }
  if (req.keep_alive != null) passThrough.keep_alive = req.keep_alive;
  if (typeof req.think === "boolean") passThrough.think = req.think;
  else if (req.think != null) passThrough.reasoning_effort = req.think;
  const format = outputFormatOf(req.format ?? undefined);
  if (format !== undefined) passThrough.response_format = format.kind === "json_object" ? { type: "json_object" } : { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict: format.strict } };
  const request: ProxyRequest = {
    model: req.model ?? "",
    messages: toMessages(req.messages),
    tools,
    toolChoice: undefined,
    stream: req.stream !== false,
    // The last line of an Ollama stream always carries the counts.
    includeUsage: true,
    body: passThrough,
  };
  if (format !== undefined) request.format = format;
  if (omitted.length > 0) request.omittedTools = omitted;
  return request;
}

/** `"json"` or a JSON Schema; `""` is Ollama's "no format". A schema that does not compile is the caller's 400. */
function outputFormatOf(format: "" | "json" | Record<string, unknown> | undefined): OutputFormat | undefined {
  if (format === undefined || format === "") return undefined;
  if (format === "json") return { kind: "json_object" };
  responseSchemaCheck(format);
  return { kind: "json_schema", name: "format", schema: format, strict: true };
}

type WireMessage = z.infer<typeof message>;

function toMessages(messages: readonly WireMessage[]): Message[] {
  // The calls of the latest assistant turn that no tool message has answered yet.
  let open: ToolCallInfo[] = [];
  return messages.map((m, i) => {
    const text = withImages(textContent(m.content, `messages[${i}].content`), m.images?.length ?? 0);
    switch (m.role) {
      case "system":
        return createMessage("system", text, MessageType.SYSTEM_PROMPT);
      case "user":
        return createMessage("user", text, MessageType.USER_INPUT);
      case "assistant": {
        const calls = m.tool_calls ?? [];
        if (calls.length === 0) return createMessage("assistant", text, MessageType.TEXT_RESPONSE);
        open = calls.map((c, j) => ({ name: c.function.name, args: callArgs(c.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`), callId: c.id ?? `call_${i}_${j}` }));
        return createMessage("assistant", text, MessageType.TOOL_CALL, { toolCalls: [...open] });
      }
      case "tool": {
        const answered = answeredCall(open, m.tool_call_id ?? undefined, m.tool_name ?? undefined);
        if (answered !== undefined) open = open.filter((c) => c !== answered);
        const toolName = m.tool_name ?? answered?.name;
        const toolCallId = m.tool_call_id ?? answered?.callId;
        return createMessage("tool", text, MessageType.TOOL_RESULT, { ...(toolCallId === undefined ? {} : { toolCallId }), ...(toolName === undefined ? {} : { toolName }) });
      }
    }
  });
}

/** By id when the result names one; else the first open call of that name; else the first open call. */
function answeredCall(open: readonly ToolCallInfo[], id: string | undefined, name: string | undefined): ToolCallInfo | undefined {
  if (id !== undefined) return open.find((c) => c.callId === id);
  return (name === undefined ? undefined : open.find((c) => c.name === name)) ?? open[0];
}

/** Ollama sends an object; some clients send OpenAI's JSON string; none means no arguments. */
function callArgs(raw: unknown, where: string): unknown {
  if (raw === undefined || raw === null) return {};
  return isPlainObject(raw) ? raw : decodeArgumentsField(raw, where);
}

function withImages(content: string, images: number): string {
  if (images === 0) return content;
  return [content, ...Array.from({ length: images }, () => mediaPlaceholder("image"))].filter((t) => t !== "").join("\n");
}
