/**
 * The rescuer: runs every family parser over the reasoning-free text, keeps one reading per
 * region (earliest start wins, then the longest), and drops tools that are not available.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { ToolCall } from "../core/llm.js";
import type { CallSpan, FamilyParser } from "./call-span.js";
import { scanContext } from "./call-span.js";
import { parseCommandR } from "./command-r.js";
import { parseDeepSeek } from "./deepseek.js";
import { parseFunctionary } from "./functionary.js";
import { parseGemma } from "./gemma.js";
import { parseGranite, parsePhiFunctools } from "./granite.js";
import { parseHarmony } from "./harmony.js";
import { parseToolCallTags } from "./hermes.js";
import { parseInvokeXml } from "./invoke-xml.js";
import { parseEmbeddedJson, parseFencedJson, parsePythonTag } from "./json-calls.js";
import { parseKimi } from "./kimi.js";
import { parseMistral, parseRehearsal } from "./mistral.js";
import { parsePythonic } from "./pythonic.js";
import { parseQwenCoder } from "./qwen-coder.js";
import { typeTextArgs, type ToolSchemas } from "./schema-args.js";
import { splitReasoning } from "./think.js";

// Order breaks ties between regions with the same extent: specific markup before generic JSON.
const PARSERS: readonly FamilyParser[] = [
  parseToolCallTags, parseQwenCoder, parseInvokeXml, parseGemma, parseMistral, parseRehearsal, parsePythonTag,
  parseGranite, parsePhiFunctools, parseDeepSeek, parseKimi, parseHarmony, parseFunctionary, parseCommandR,
  parsePythonic, parseFencedJson, parseEmbeddedJson,
];

/** Each parser's format family (same order as PARSERS): the `format` metrics and traces report. */
const FAMILIES: readonly string[] = [
  "hermes", "qwen_coder", "invoke_xml", "gemma", "mistral", "rehearsal", "llama_python_tag",
  "granite", "phi_functools", "deepseek", "kimi", "harmony", "functionary", "command_r",
  "pythonic", "fenced_json", "embedded_json",
];

/**
 * Non-overlapping call regions of `text`, in source order, before the availableTools filter,
 * each with the format family that read it. Reasoning is NOT split off here (rescueToolCall
 * does that).
 *
 * @example
 * findCallSpans('x <tool_call>{"name":"a","arguments":{}}</tool_call>'); // [{ start: 2, end: 52, calls: [{ tool: "a", args: {} }], format: "hermes" }]
 */
export function findCallSpans(text: string, tools?: ReadonlySet<string>): CallSpan[] {
  const ctx = scanContext(text, tools);
  const all = PARSERS.flatMap((parse, rank) => parse(ctx).map((span) => ({ span, rank })));
  all.sort((a, b) => a.span.start - b.span.start || b.span.end - a.span.end || a.rank - b.rank);
  const kept: CallSpan[] = [];
  let claimedTo = 0;
  for (const { span, rank } of all) {
    if (span.start < claimedTo) continue;
    kept.push({ ...span, format: FAMILIES[rank]! });
    claimedTo = span.end;
  }
  return kept;
}

/**
 * Salvage tool calls a model wrote as text, in any supported family's syntax. With `schemas`
 * (tool name → parameters JSON Schema), values that formats carry only as text are typed from
 * the schema (schema-args.ts).
 *
 * @example
 * rescueToolCall('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', ["get_weather"]);
 * // → [{ tool: "get_weather", args: { city: "Paris" } }]
 */
export function rescueToolCall(text: string, availableTools: readonly string[], schemas?: ToolSchemas): ToolCall[] {
  const tools = checkInputs(text, availableTools);
  const { content } = splitReasoning(text);
  return findCallSpans(content, tools).flatMap((s) => s.calls.filter((c) => tools.has(c.tool)).map((c) => typeTextArgs(c, schemas)));
}

/**
 * Turn raw model text into calls + visible content + reasoning. Regions that yielded an
 * available call are cut from `content`; markup naming only unknown tools stays visible so the
 * caller can see what was attempted — unless `attempted` is set: then calls to unknown tools
 * are returned too (and cut), for a validator that answers them with the unknown-tool nudge.
 *
 * @example
 * extractToolCalls("<think>need weather</think>Checking.\n[get_weather(city=\"Oslo\")]", ["get_weather"]);
 * // → { toolCalls: [{ tool: "get_weather", args: { city: "Oslo" } }], content: "Checking.", reasoning: "need weather", format: "pythonic" }
 * extractToolCalls('{"name": "get_wether", "arguments": {}}', ["get_weather"], undefined, { attempted: true }).toolCalls;
 * // → [{ tool: "get_wether", args: {} }]
 */
export function extractToolCalls(
  text: string,
  availableTools: readonly string[],
  schemas?: ToolSchemas,
  options: { attempted?: boolean } = {},
): { toolCalls: ToolCall[]; content: string; reasoning?: string; format?: string } {
  const tools = checkInputs(text, availableTools);
  const { content: visible, reasoning } = splitReasoning(text);
  const toolCalls: ToolCall[] = [];
  let content = "";
  let pos = 0;
  let format: string | undefined;
  for (const span of findCallSpans(visible, tools)) {
    const calls = options.attempted === true ? span.calls : span.calls.filter((c) => tools.has(c.tool));
    if (calls.length === 0) continue;
    format ??= span.format;
    toolCalls.push(...calls.map((c) => typeTextArgs(c, schemas)));
    content += visible.slice(pos, span.start);
    pos = span.end;
  }
  content = cleanContent(content + visible.slice(pos));
  const out: { toolCalls: ToolCall[]; content: string; reasoning?: string; format?: string } = { toolCalls, content };
  if (reasoning !== undefined) out.reasoning = reasoning;
  // The family of the first call found: what metrics and traces count a rescue under.
  if (format !== undefined) out.format = format;
  return out;
}

// Framing tokens that are never meant for a reader: section wrappers (DeepSeek's in the distill
// spellings llama.cpp accepts: "▁", "_", " ", "\\_", `<｜tool▁calls｜>`), stop tokens (Gemma 4's
// `<|tool_response>` included), Harmony headers.
const FRAMING =
  /<[｜|]tool(?:[▁_ ]|\\_)calls(?:(?:[▁_ ]|\\_)(?:begin|end))?[｜|]>|<\|tool_calls_section_(?:begin|end)\|>|<\|(?:python_tag|python_start|python_end|eom_id|eot_id|return|end|call)\|>|<\|tool_response>|<\|start\|>assistant|<\|channel\|>(?:final|commentary)<\|message\|>/g;
// Wrappers around call blocks (Hunyuan's <tool_calls> inside its <answer>, Seed-OSS, MiniMax-M2,
// DSML, Claude-style): removed once the calls inside were cut out and nothing but whitespace is
// left between them. Innermost first, so `<answer><tool_calls>…</tool_calls></answer>` goes whole.
const EMPTY_WRAPPER = /<(tool_calls|seed:tool_call|minimax:tool_call|function_calls|｜DSML｜function_calls)>\s*<\/\1>/g;
const EMPTY_ANSWER = /<answer>\s*<\/answer>/g;

function cleanContent(text: string): string {
  return text.replace(FRAMING, "").replace(EMPTY_WRAPPER, "").replace(EMPTY_ANSWER, "").replace(/\n{3,}/g, "\n\n").trim();
}

function checkInputs(text: unknown, availableTools: unknown): Set<string> {
  if (typeof text !== "string") throw new InvalidArgumentError("text", `expected a string, got ${describe(text)}`);
  if (!Array.isArray(availableTools)) {
    throw new InvalidArgumentError("availableTools", `expected an array of tool names, got ${describe(availableTools)}`);
  }
  for (const [i, t] of availableTools.entries()) {
    if (typeof t !== "string") throw new InvalidArgumentError(`availableTools[${i}]`, `expected a string, got ${describe(t)}`);
  }
  return new Set(availableTools as string[]);
}

function describe(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}
