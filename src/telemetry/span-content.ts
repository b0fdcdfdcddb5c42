/**
 * Message content as span attributes, for runs that opt in (`telemetry.recordContent`): the
 * GenAI semantic conventions' JSON message form (role + typed parts), with every tool call's
 * arguments masked per its tool's `redact`. Never called unless the user opted in.
 */
import type { LLMResponse } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import { redactArgs } from "./redact.js";

/** The argument names a tool masks (its `redact`), by tool name. */
export type RedactionOf = (tool: string) => readonly string[] | undefined;

type Part =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "tool_call"; id?: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id?: string; response: string };

/**
 * `gen_ai.input.messages`: the history the model was sent.
 *
 * @example
 * inputMessagesJson([{ role: "user", content: "hi", meta: { type: "user_input" } }], () => undefined);
 * // '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]'
 */
export function inputMessagesJson(messages: readonly Message[], redactionOf: RedactionOf): string {
  return JSON.stringify(
    messages.map((m) => {
      const parts: Part[] = [];
      if (m.role === "tool") parts.push({ type: "tool_call_response", ...(m.toolCallId ? { id: m.toolCallId } : {}), response: m.content });
      else if (m.content) parts.push({ type: m.meta.type === "reasoning" ? "reasoning" : "text", content: m.content });
      for (const c of m.toolCalls ?? []) parts.push({ type: "tool_call", id: c.callId, name: c.name, arguments: redactArgs(c.args, redactionOf(c.name)) });
      return { role: m.role, parts };
    }),
  );
}

/**
 * `gen_ai.output.messages`: the model's answer.
 *
 * @example
 * outputMessagesJson({ type: "text", content: "done" }, () => undefined);
 * // '[{"role":"assistant","parts":[{"type":"text","content":"done"}],"finish_reason":"stop"}]'
 */
export function outputMessagesJson(response: LLMResponse, redactionOf: RedactionOf): string {
  const parts: Part[] = [];
  if (response.reasoning) parts.push({ type: "reasoning", content: response.reasoning });
  if (response.content) parts.push({ type: "text", content: response.content });
  if (response.type === "tool_calls") {
    for (const c of response.toolCalls) parts.push({ type: "tool_call", ...(c.id ? { id: c.id } : {}), name: c.tool, arguments: redactArgs(c.args, redactionOf(c.tool)) });
  }
  return JSON.stringify([{ role: "assistant", parts, finish_reason: finishReason(response) }]);
}

/**
 * `gen_ai.tool.call.arguments`: a call's arguments as JSON, masked per the tool's `redact`.
 *
 * @example
 * toolArgumentsJson({ user: "ann", password: "x" }, ["password"]); // '{"user":"ann","password":"[redacted]"}'
 */
export function toolArgumentsJson(args: unknown, redact: readonly string[] | undefined): string {
  return JSON.stringify(redactArgs(args, redact)) ?? "null";
}

/**
 * The finish reason in the conventions' words: a batch of calls ends on "tool_calls", text on "stop".
 *
 * @example
 * finishReason({ type: "tool_calls", toolCalls: [] }); // "tool_calls"
 */
export function finishReason(response: LLMResponse): string {
  return response.type === "tool_calls" ? "tool_calls" : "stop";
}
