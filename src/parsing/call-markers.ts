/**
 * Does a reply that rescue could not parse still look like an attempted tool call? A model
 * that opens `<tool_call>` and then writes broken JSON meant to call a tool: nudging it
 * recovers the call, while passing the text on would hand the caller markup. Plain prose that
 * merely mentions a tool is not an attempt, so only call syntax counts: a format's own marker
 * tokens, Gemma's `call:NAME{` for an available tool, or a JSON `"name"`/`"tool"` member naming
 * one.
 */

/** Opening tokens of the call formats src/parsing reads (the streaming judge holds text from each). */
export const CALL_MARKERS: readonly string[] = [
  "<tool_call>",
  "<tool_calls>",
  "[TOOL_CALLS]",
  "<function=",
  "<|python_tag|>",
  "<|tool_call|>",
  "<|tool_call>",
  "functools[",
  "<｜tool", // every DeepSeek spelling: "▁", "_", " ", `<｜tool▁sep｜>`
  "<|tool_call_begin|>",
  "<|tool_calls_section_begin|>",
  "to=functions.",
  "<seed:tool_call>",
  "<minimax:tool_call>",
  "<｜DSML｜",
  "<|START_ACTION|>",
  "<arg_key>",
  "<start_function_call>",
  "<|tool▁", // DeepSeek with ASCII bars (R1 distills)
  "```tool_code", // Gemma 3
  "<function_calls>",
  '<invoke name="',
  "<parameter=",
];

/** JSON keys whose string value naming an offered tool makes text a call attempt. */
export const CALL_NAME_KEYS: readonly string[] = ['"name"', '"tool"', '"function"'];
/** What follows such a key when it names something: `: "value"` (read within NAMED_VALUE_REACH characters). */
export const NAMED_VALUE = /^\s*:\s*"([^"\\]{1,64})"/;
export const NAMED_VALUE_REACH = 80;

/**
 * Every marker that makes text a call attempt for these tools: the formats' own tokens and
 * Gemma 4's `call:NAME{` for each offered tool.
 *
 * @example
 * callMarkersFor(["get_weather"]).includes("call:get_weather{"); // true
 */
export function callMarkersFor(toolNames: readonly string[]): string[] {
  return [...CALL_MARKERS, ...toolNames.map((n) => `call:${n}{`)];
}

/**
 * @example
 * looksLikeToolCall('<tool_call>{"name": "get_weather", "arguments": {"city": }', ["get_weather"]); // true
 * looksLikeToolCall("Use get_weather when you need the forecast.", ["get_weather"]);             // false
 */
export function looksLikeToolCall(text: string, toolNames: readonly string[]): boolean {
  // Gemma 4 without its start token: `call:get_weather{` names the tool in call syntax.
  if (callMarkersFor(toolNames).some((m) => text.includes(m))) return true;
  const names = new Set(toolNames);
  // One pass over `"name"`-like keys; each is followed by at most a short `: "value"` read.
  for (const key of CALL_NAME_KEYS) {
    for (let at = text.indexOf(key); at !== -1; at = text.indexOf(key, at + key.length)) {
      const value = NAMED_VALUE.exec(text.slice(at + key.length, at + key.length + NAMED_VALUE_REACH));
      if (value && names.has(value[1]!)) return true;
    }
  }
  return false;
}
