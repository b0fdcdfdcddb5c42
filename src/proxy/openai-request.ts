/**
 * POST /v1/chat/completions bodies → ProxyRequest. The schema checks what the proxy reads;
 * every other field (sampling, response_format, vendor extensions) passes through untouched.
 *
 * Liberal where it can be: content parts other than text never make a 400 (media become a
 * placeholder, `refusal` its text, unknown types are left out: content-parts.ts), and tools
 * of a type other than `function` (`custom`, built-in tools) are left out of the backend
 * request and named in `x-forge-omitted-tools` — the proxy cannot validate their calls. A
 * role it does not know stays a 400: the role says who said a thing, which cannot be guessed.
 */
import { z } from "zod";
import type { ToolChoice } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import { setOwn } from "../core/set-own.js";
import type { ToolSpec } from "../core/tool.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import { HttpError } from "../proxy-request/http-error.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { decodeArgumentsField, parseWith, textContent } from "./request-body.js";
import { responseSchemaCheck } from "../proxy-request/request-tools.js";

const content = z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]);
const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});
const message = z.discriminatedUnion("role", [
  z.looseObject({ role: z.enum(["system", "developer"]), content }),
  z.looseObject({ role: z.literal("user"), content }),
  z.looseObject({ role: z.literal("assistant"), content: content.optional(), tool_calls: z.array(toolCall).nullish() }),
  z.looseObject({ role: z.literal("tool"), content, tool_call_id: z.string() }),
]);
const anyTool = z.looseObject({ type: z.string().optional() });
const functionTool = z.looseObject({
  type: z.literal("function").optional(),
  function: z.looseObject({
    name: z.string().min(1).max(128),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});
const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string().min(1) }) }),
]);
export const chatCompletionRequest = z.looseObject({
  model: z.string().nullish(),
  messages: z.array(message).min(1, "at least one message is required"),
  tools: z.array(anyTool).nullish(),
  tool_choice: toolChoice.nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.literal(1, "only n = 1 is supported").nullish(),
  functions: z.undefined("legacy `functions` are not supported; use `tools`").optional(),
});

/** Fields the proxy owns; everything else in the body rides through to the backend. */
const OWNED = new Set(["model", "messages", "tools", "tool_choice", "stream", "stream_options", "n"]);

/**
 * @example
 * parseChatCompletionRequest({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] }).messages.length; // 1
 */
export function parseChatCompletionRequest(body: Record<string, unknown>): ProxyRequest {
  const req = parseWith(chatCompletionRequest, body);
  const { tools, omitted } = functionTools(req.tools ?? []);
  const choice = req.tool_choice ?? undefined;
  if (typeof choice === "object" && !tools.some((t) => t.name === choice.function.name)) {
    throw new HttpError(400, "invalid_request_error", `tool_choice names "${choice.function.name}", which is not in tools`);
  }
  const passThrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!OWNED.has(key)) setOwn(passThrough, key, value);
  const format = outputFormatOf(body.response_format);
  return {
    ...(format === undefined ? {} : { format }),
    ...(omitted.length === 0 ? {} : { omittedTools: omitted }),
    model: req.model ?? "",
    messages: toMessages(req.messages),
    tools,
    toolChoice: choice === undefined ? undefined : typeof choice === "string" ? choice : { type: "function", function: { name: choice.function.name } },
    stream: req.stream === true,
    includeUsage: req.stream_options?.include_usage === true,
    body: passThrough,
  } satisfies ProxyRequest & { toolChoice: ToolChoice | undefined };
}

/**
 * Function tools become ToolSpecs; other tool types are left out, by name. Ollama's `tools`
 * have the same shape, so its door reads them here too.
 *
 * @example
 * functionTools([{ type: "function", function: { name: "f" } }, { type: "web_search" }]); // { tools: [f], omitted: ["web_search"] }
 */
export function functionTools(tools: readonly z.infer<typeof anyTool>[]): { tools: ToolSpec[]; omitted: string[] } {
  const out: { tools: ToolSpec[]; omitted: string[] } = { tools: [], omitted: [] };
  tools.forEach((raw, i) => {
    if (raw.type !== undefined && raw.type !== "function") {
      out.omitted.push(otherToolName(raw));
      return;
    }
    const t = parseWith(functionTool, raw, `tools[${i}]`);
    out.tools.push({ name: t.function.name, description: t.function.description ?? "", parameters: t.function.parameters ?? { type: "object", properties: {} } });
  });
  return out;
}

/** `{ type: "custom", custom: { name } }`, a top-level `name`, or the type itself (`web_search`). */
function otherToolName(tool: { type?: string | undefined } & Record<string, unknown>): string {
  const inner = tool[tool.type ?? ""];
  if (typeof inner === "object" && inner !== null && typeof (inner as { name?: unknown }).name === "string") return (inner as { name: string }).name;
  return typeof tool.name === "string" ? tool.name : (tool.type ?? "");
}

const responseFormat = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({ type: z.literal("json_object") }),
  z.looseObject({
    type: z.literal("json_schema"),
    json_schema: z.looseObject({ name: z.string().min(1).max(64), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullish() }),
  }),
]);

/**
 * `response_format` → the format the answer is checked against (it still goes to the backend,
 * which may constrain its sampling with it). A schema that does not compile is the caller's 400.
 */
function outputFormatOf(value: unknown): OutputFormat | undefined {
  if (value === undefined || value === null) return undefined;
  const rf = parseWith(responseFormat, value, "response_format");
  if (rf.type === "text") return undefined;
  if (rf.type === "json_object") return { kind: "json_object" };
  const schema = rf.json_schema.schema ?? {};
  responseSchemaCheck(schema);
  return { kind: "json_schema", name: rf.json_schema.name, schema, strict: rf.json_schema.strict === true };
}

function toMessages(messages: z.infer<typeof message>[]): Message[] {
  const toolNames = new Map<string, string>();
  return messages.map((m, i) => {
    const where = `messages[${i}].content`;
    switch (m.role) {
      case "system":
      case "developer":
        return createMessage("system", textContent(m.content, where), MessageType.SYSTEM_PROMPT);
      case "user":
        return createMessage("user", textContent(m.content, where), MessageType.USER_INPUT);
      case "assistant": {
        const text = textContent(m.content, where);
        const calls = m.tool_calls ?? [];
        if (calls.length === 0) return createMessage("assistant", text, MessageType.TEXT_RESPONSE);
        for (const c of calls) toolNames.set(c.id, c.function.name);
        const toolCalls = calls.map((c, j) => ({ name: c.function.name, args: decodeArgumentsField(c.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`), callId: c.id }));
        return createMessage("assistant", text, MessageType.TOOL_CALL, { toolCalls });
      }
      case "tool": {
        const name = toolNames.get(m.tool_call_id);
        const extra = name === undefined ? { toolCallId: m.tool_call_id } : { toolCallId: m.tool_call_id, toolName: name };
        return createMessage("tool", textContent(m.content, where), MessageType.TOOL_RESULT, extra);
      }
    }
  });
}
