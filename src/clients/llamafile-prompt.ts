/**
 * Prompt-injected tool calling for servers without native function calling: the history is
 * rewritten into plain user/assistant text that the chat template accepts, and the tool
 * instructions ride in the system message. Pure functions over OpenAI wire messages.
 */
import type { OpenAIWireMessage } from "../core/wire-messages.js";
import type { ToolSpec } from "../core/tool.js";
import { buildToolPrompt } from "../parsing/index.js";
import { decodeToolArguments } from "./tool-args.js";

/** A plain chat message: what prompt mode sends. */
export interface PlainMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * role "tool" → "user" (the backend has no tool role); assistant tool_calls → the same fenced
 * `{"tool", "args"}` JSON the tool prompt asks for, so history doubles as few-shot examples.
 *
 * @example
 * downgradeMessages([{ role: "tool", name: "get_weather", content: "72F" }])
 * // → [{ role: "user", content: 'Tool "get_weather" returned:\n72F' }]
 */
export function downgradeMessages(messages: readonly OpenAIWireMessage[]): PlainMessage[] {
  return messages.map((m): PlainMessage => {
    const content = m.content ?? "";
    if (m.role === "tool") {
      const label = typeof m.name === "string" && m.name ? `Tool "${m.name}" returned:` : "Tool returned:";
      return { role: "user", content: `${label}\n${content}` };
    }
    if (m.role === "assistant" && m.tool_calls?.length) {
      const calls = m.tool_calls.map((c) => formatPromptCall(c.function.name, decodeToolArguments(c.function.arguments)));
      return { role: "assistant", content: [content, ...calls].filter((s) => s.length > 0).join("\n") };
    }
    return { role: m.role, content };
  });
}

/** One call in the prompt format. */
export function formatPromptCall(tool: string, args: unknown): string {
  return "```json\n" + JSON.stringify({ tool, args }) + "\n```";
}

/**
 * Merge neighbours with the same role: strict-alternation chat templates (Mistral's counts
 * plain user/assistant turns) reject two user turns in a row, which downgrading creates.
 *
 * @example
 * mergeConsecutive([{ role: "user", content: "a" }, { role: "user", content: "b" }])
 * // → [{ role: "user", content: "a\n\nb" }]
 */
export function mergeConsecutive(messages: readonly PlainMessage[]): PlainMessage[] {
  const out: PlainMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content = [last.content, m.content].filter((s) => s.length > 0).join("\n\n");
    else out.push({ ...m });
  }
  return out;
}

/** Append the tool prompt to the leading system message, or add one. */
export function injectToolPrompt(messages: readonly PlainMessage[], toolPrompt: string): PlainMessage[] {
  const [first, ...rest] = messages;
  if (first?.role === "system") {
    return [{ role: "system", content: first.content ? `${first.content}\n\n${toolPrompt}` : toolPrompt }, ...rest];
  }
  return [{ role: "system", content: toolPrompt }, ...messages];
}

/**
 * The whole prompt-mode rewrite: downgrade, inject the tool prompt, merge.
 *
 * @example
 * const wire = toPromptModeMessages(serialized, [weather.spec]);
 */
export function toPromptModeMessages(messages: readonly OpenAIWireMessage[], tools: readonly ToolSpec[] | undefined): PlainMessage[] {
  const plain = downgradeMessages(messages);
  const withPrompt = tools && tools.length > 0 ? injectToolPrompt(plain, buildToolPrompt(tools)) : plain;
  return mergeConsecutive(withPrompt);
}
