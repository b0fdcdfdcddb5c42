/**
 * JSON text decoded with a depth bound: the one place where JSON that arrived inside a string
 * (a tool call's `arguments`, a call a model wrote in its text, a stream line) is measured
 * before it is parsed. JSON.parse itself takes any depth, but what is built from it does not:
 * JSON.stringify, structuredClone and ajv recurse, and a `"[[[[…"` 100,000 levels deep ends
 * in "Maximum call stack size exceeded" wherever it is first rendered — far from where it came
 * in, and as a 5xx instead of the sender's error. Measuring the text first also refuses it
 * before a million nested arrays are allocated.
 */
import { MAX_JSON_DEPTH } from "./json-value.js";

/**
 * Deepest nesting decoded from model output (arguments strings, rescued calls): MAX_JSON_DEPTH
 * less room for what wraps the value (a response's `toolCalls[i].args`, an NDJSON line's
 * `message.tool_calls[i].function.arguments`), so whatever decodes also passes the
 * LLMResponse contract and reaches the validator, which nudges the model.
 *
 * @example
 * parseJsonText(text, MAX_DECODED_JSON_DEPTH);
 */
export const MAX_DECODED_JSON_DEPTH = MAX_JSON_DEPTH - 8;

/**
 * Whether the JSON text in `text[start, end)` nests objects and arrays deeper than `maxDepth`
 * (`[]` is depth 1). Brackets inside strings do not count. Linear, no recursion, and it stops
 * at the first bracket past the bound; text that is not JSON is measured the same way (the
 * parser refuses it afterwards).
 *
 * @example
 * jsonDepthExceeds("[[1]]", 1); // true
 * jsonDepthExceeds('["[[["]', 1); // false
 */
export function jsonDepthExceeds(text: string, maxDepth: number, start = 0, end = text.length): boolean {
  let depth = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: an escaped character never ends it.
      for (i++; i < end; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** `cause`: JSON.parse's SyntaxError, for callers that wrap it in their own error. */
export type JsonTextResult = { ok: true; value: unknown } | { ok: false; reason: "syntax"; cause: unknown } | { ok: false; reason: "depth" };

/**
 * JSON.parse with a depth bound; failures are data (`syntax` or `depth`), never a throw.
 *
 * @example
 * parseJsonText('{"a": [1]}', 64); // { ok: true, value: { a: [1] } }
 * parseJsonText("[".repeat(100) + "]".repeat(100), 64); // { ok: false, reason: "depth" }
 * parseJsonText("{", 64); // { ok: false, reason: "syntax", cause: SyntaxError }
 */
export function parseJsonText(text: string, maxDepth: number): JsonTextResult {
  if (jsonDepthExceeds(text, maxDepth)) return { ok: false, reason: "depth" };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (cause) {
    // Not JSON: the caller decides what that means (kept raw for the validator, a 400, ...).
    return { ok: false, reason: "syntax", cause };
  }
}
