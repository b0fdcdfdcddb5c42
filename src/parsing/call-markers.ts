/**
 * Does a reply that rescue could not parse still look like an attempted tool call? A model
 * that opens `<tool_call>` and then writes broken JSON meant to call a tool: nudging it
 * recovers the call, while passing the text on would hand the caller markup. Plain prose that
 * merely mentions a tool is not an attempt, so only call syntax counts: a format's own marker
 * tokens, Gemma's `call:NAME{` for an available tool, or a JSON `"name"`/`"tool"` member naming
 * one.
 */

/** Opening tokens of the call formats src/parsing reads. */
const MARKERS = [
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

/**
 * @example
 * looksLikeToolCall('<tool_call>{"name": "get_weather", "arguments": {"city": }', ["get_weather"]); // true
 * looksLikeToolCall("Use get_weather when you need the forecast.", ["get_weather"]);             // false
 */
export function looksLikeToolCall(text: string, toolNames: readonly string[]): boolean {
  if (MARKERS.some((m) => text.includes(m))) return true;
  // Gemma 4 without its start token: `call:get_weather{` names the tool in call syntax.
  if (toolNames.some((n) => text.includes(`call:${n}{`))) return true;
  const names = new Set(toolNames);
  // One pass over `"name"`-like keys; each is followed by at most a short `: "value"` read.
  for (const key of ['"name"', '"tool"', '"function"']) {
    for (let at = text.indexOf(key); at !== -1; at = text.indexOf(key, at + key.length)) {
      const value = /^\s*:\s*"([^"\\]{1,64})"/.exec(text.slice(at + key.length, at + key.length + 80));
      if (value && names.has(value[1]!)) return true;
    }
  }
  return false;
}
