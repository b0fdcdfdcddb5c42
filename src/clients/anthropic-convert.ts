/**
 * Pure OpenAI-format → Anthropic Messages conversion (seed 000 "AnthropicClient"): system
 * extraction, tool_calls → tool_use, role=tool → tool_result inside user turns, synthetic
 * is_error results for tool_use blocks that were never answered, strict role alternation.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { WireMessage } from "../core/wire-messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";
import { decodeToolArguments } from "./tool-args.js";

type ContentBlock = Anthropic.ContentBlockParam;
type ThinkingBlock = Anthropic.ThinkingBlockParam | Anthropic.RedactedThinkingBlockParam;

export interface AnthropicRequestParts {
  system?: string;
  messages: Anthropic.MessageParam[];
}

export interface ConvertOptions {
  /**
   * Thinking blocks (with signatures) captured from the response that produced a tool_use id.
   * Anthropic requires them back, unmodified, before that tool_use when thinking is on.
   */
  thinkingFor?: (toolUseId: string) => readonly ThinkingBlock[] | undefined;
}

export type AnthropicToolChoice = "auto" | "any" | { type: "tool"; name: string };

/** Text given to the model for a tool_use that was never executed (step / unknown-tool nudges). */
export const UNPAIRED_TOOL_RESULT = "Error: this tool call was not executed.";

/** Tool results the loop produced from failures start with a bracketed error tag. */
const ERROR_TAGGED = /^\[[A-Za-z]*Error\]/;

/**
 * Anthropic ids must match ^[a-zA-Z0-9_-]+$; ids from other backends are mapped the same way
 * on both the tool_use and the tool_result side, so pairs stay paired.
 *
 * @example
 * toAnthropicToolId("call:1"); // "call_1"
 */
export function toAnthropicToolId(id: string | undefined, fallback: string): string {
  const clean = (id ?? "").replace(/[^A-Za-z0-9_-]/g, "_");
  return clean.length > 0 ? clean : fallback;
}

/**
 * Tool specs → Anthropic tool definitions.
 *
 * @example
 * toAnthropicTools([weather.spec]); // [{ name: "get_weather", description: "...", input_schema: {...} }]
 */
export function toAnthropicTools(tools: readonly ToolSpec[]): Anthropic.Tool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters as Anthropic.Tool.InputSchema }));
}

/**
 * The `tool_choice` request field.
 *
 * @example
 * toAnthropicToolChoice("any"); // { type: "any" }
 */
export function toAnthropicToolChoice(choice: AnthropicToolChoice): Anthropic.ToolChoice {
  if (choice === "auto") return { type: "auto" };
  if (choice === "any") return { type: "any" };
  return { type: "tool", name: choice.name };
}

/** Anthropic wants an object for `input`; a call whose args were not one keeps them visibly. */
function toolInput(args: unknown): Record<string, unknown> {
  const decoded = decodeToolArguments(args === "" ? "{}" : args);
  return isPlainObject(decoded) ? decoded : { _invalid_arguments: decoded };
}

function isToolResult(block: ContentBlock): boolean {
  return block.type === "tool_result";
}

function textOf(content: unknown): string {
  return typeof content === "string" ? content : content == null ? "" : JSON.stringify(content);
}

/**
 * Convert a serialized OpenAI-format history.
 *
 * @example
 * const { system, messages } = toAnthropicMessages([
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "Weather in Paris?" },
 * ]);
 * // system === "Be brief."; messages === [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }]
 */
export function toAnthropicMessages(wire: readonly WireMessage[], options: ConvertOptions = {}): AnthropicRequestParts {
  const systemParts: string[] = [];
  const out: { role: "user" | "assistant"; content: ContentBlock[] }[] = [];
  let pending: string[] = [];
  let generated = 0;

  const push = (role: "user" | "assistant", blocks: ContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (!last || last.role !== role) {
      out.push({ role, content: blocks });
      return;
    }
    // tool_result blocks must lead their user turn, so a merge keeps them in front.
    const merged = [...last.content, ...blocks];
    last.content = [...merged.filter(isToolResult), ...merged.filter((b) => !isToolResult(b))];
  };
  const closePending = (): void => {
    if (pending.length === 0) return;
    push(
      "user",
      pending.map((id) => ({ type: "tool_result", tool_use_id: id, content: UNPAIRED_TOOL_RESULT, is_error: true })),
    );
    pending = [];
  };

  for (const message of wire) {
    const content = textOf(message.content);
    if (message.role === "system") {
      // Anthropic has one top-level system prompt; later system messages (compaction
      // summaries) join it in order rather than being dropped.
      if (content.length > 0) systemParts.push(content);
      continue;
    }
    if (message.role === "tool") {
      const id = toAnthropicToolId(typeof message.tool_call_id === "string" ? message.tool_call_id : undefined, "");
      const index = pending.indexOf(id);
      if (index === -1) {
        // No open tool_use to attach to (its call was never sent): keep the text as text.
        const label = typeof message.name === "string" ? message.name : typeof message.tool_name === "string" ? message.tool_name : id || "tool";
        push("user", [{ type: "text", text: `[result of ${label}]\n${content}` }]);
        continue;
      }
      pending.splice(index, 1);
      const block: Anthropic.ToolResultBlockParam = { type: "tool_result", tool_use_id: id, content };
      if (ERROR_TAGGED.test(content)) block.is_error = true;
      push("user", [block]);
      continue;
    }
    closePending();
    if (message.role === "user") {
      if (content.length > 0) push("user", [{ type: "text", text: content }]);
      continue;
    }
    // assistant
    const blocks: ContentBlock[] = [];
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
    const ids = calls.map((call) => {
      const raw = (call as { id?: unknown }).id;
      return toAnthropicToolId(typeof raw === "string" ? raw : undefined, `toolu_forge_${generated++}`);
    });
    const thinking = ids.length > 0 && options.thinkingFor ? options.thinkingFor(ids[0]!) : undefined;
    if (thinking) blocks.push(...thinking);
    if (content.length > 0) blocks.push({ type: "text", text: content });
    calls.forEach((call, i) => {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function ?? {};
      const args = (fn as { arguments?: unknown }).arguments;
      blocks.push({ type: "tool_use", id: ids[i]!, name: String(fn.name ?? ""), input: toolInput(args) });
    });
    push("assistant", blocks);
    pending = [...ids];
  }
  closePending();

  const parts: AnthropicRequestParts = { messages: out };
  if (systemParts.length > 0) parts.system = systemParts.join("\n\n");
  return parts;
}
