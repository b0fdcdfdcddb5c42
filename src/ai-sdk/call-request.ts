/**
 * One AI SDK model call (LanguageModelV4CallOptions) as the proxy-request machine's request,
 * and the machine's retries (failed attempts, nudges) back as prompt messages. The caller's own
 * prompt is never rebuilt from forge messages: each retry sends it unchanged (files, provider
 * options, reasoning parts and all) with the machine's additions appended.
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";
import type { ToolChoice } from "../core/llm.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import type { JSONSchema, ToolSpec } from "../core/tool.js";
import type { OutputFormat } from "../guardrails/structured-output.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";

/**
 * The machine's view of one call. Tool schemas come from the call itself, so a middleware with
 * no options already knows what to check.
 *
 * @example
 * callRequest({ prompt, tools: [{ type: "function", name: "get_weather", inputSchema }] }, "qwen3:8b", false).tools[0].name; // "get_weather"
 */
export function callRequest(params: LanguageModelV4CallOptions, model: string, stream: boolean): ProxyRequest {
  const request: ProxyRequest = {
    model,
    messages: params.prompt.flatMap(messagesOf),
    tools: (params.tools ?? []).map(toolSpec),
    toolChoice: toolChoiceOf(params.toolChoice),
    stream,
    includeUsage: false,
    // The model call is made from `params` itself (request-io.ts); nothing rides in the body.
    body: {},
    failedCallIds: failedCallIds(params.prompt),
  };
  const format = outputFormat(params.responseFormat);
  if (format) request.format = format;
  return request;
}

function toolSpec(tool: NonNullable<LanguageModelV4CallOptions["tools"]>[number]): ToolSpec {
  // A provider-defined tool (web search, code execution) runs at the provider with arguments the
  // provider defines: its calls are accepted by name and their arguments left to the provider.
  if (tool.type === "provider") return { name: tool.name, description: "", parameters: {} };
  return { name: tool.name, description: tool.description ?? "", parameters: tool.inputSchema as JSONSchema };
}

function toolChoiceOf(choice: LanguageModelV4ToolChoice | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  return choice.type === "tool" ? { type: "function", function: { name: choice.toolName } } : choice.type;
}

function outputFormat(format: LanguageModelV4CallOptions["responseFormat"]): OutputFormat | undefined {
  if (format?.type !== "json") return undefined;
  if (format.schema === undefined) return { kind: "json_object" };
  return { kind: "json_schema", name: format.name ?? "response", schema: format.schema as JSONSchema, strict: false };
}

function textOf(parts: readonly { type: string; text?: string }[]): string {
  return parts.flatMap((p) => (p.type === "text" && p.text !== undefined ? [p.text] : [])).join("");
}

function outputText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return output.reason ?? "Tool execution denied";
    case "content":
      return textOf(output.value);
  }
}

/** The caller's history as forge messages: what the machine's policy and counts read. */
function messagesOf(message: LanguageModelV4Message): Message[] {
  switch (message.role) {
    case "system":
      return [createMessage("system", message.content, MessageType.SYSTEM_PROMPT)];
    case "user":
      return [createMessage("user", textOf(message.content), MessageType.USER_INPUT)];
    case "assistant": {
      const calls = message.content.flatMap((p) => (p.type === "tool-call" ? [{ name: p.toolName, args: p.input, callId: p.toolCallId }] : []));
      const text = textOf(message.content);
      return [calls.length > 0 ? createMessage("assistant", text, MessageType.TOOL_CALL, { toolCalls: calls }) : createMessage("assistant", text, MessageType.TEXT_RESPONSE)];
    }
    case "tool":
      return message.content.flatMap((p) =>
        p.type === "tool-result" ? [createMessage("tool", outputText(p.output), MessageType.TOOL_RESULT, { toolName: p.toolName, toolCallId: p.toolCallId })] : [],
      );
  }
}

function failedCallIds(prompt: LanguageModelV4Prompt): string[] {
  return prompt.flatMap((m) =>
    m.role === "tool" ? m.content.flatMap((p) => (p.type === "tool-result" && p.output.type.startsWith("error") ? [p.toolCallId] : [])) : [],
  );
}

/**
 * The prompt for one attempt: the caller's, then what the machine appended after it (a failed
 * attempt as the assistant turn it was, and its nudge on the user or tool channel, as the proxy
 * sends them). Consecutive tool results become one tool message, as the AI SDK writes them.
 *
 * @example
 * attemptPrompt(params.prompt, context.messages.slice(request.messages.length));
 */
export function attemptPrompt(prompt: LanguageModelV4Prompt, appended: readonly Message[]): LanguageModelV4Prompt {
  const out: LanguageModelV4Message[] = [...prompt];
  for (const m of appended) {
    if (m.role === "tool") {
      const part = { type: "tool-result" as const, toolCallId: m.toolCallId ?? "", toolName: m.toolName ?? "", output: { type: "error-text" as const, value: m.content } };
      const last = out.at(-1);
      if (last?.role === "tool" && out.length > prompt.length) last.content.push(part);
      else out.push({ role: "tool", content: [part] });
    } else if (m.role === "assistant") {
      const text = m.content === "" ? [] : [{ type: "text" as const, text: m.content }];
      const calls = (m.toolCalls ?? []).map((c) => ({ type: "tool-call" as const, toolCallId: c.callId, toolName: c.name, input: c.args }));
      out.push({ role: "assistant", content: [...text, ...calls] });
    } else if (m.role === "user") {
      out.push({ role: "user", content: [{ type: "text", text: m.content }] });
    } else {
      out.push({ role: "system", content: m.content });
    }
  }
  return out;
}
