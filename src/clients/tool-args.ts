/**
 * The one decoder for tool-call arguments as backends and callers send them (OpenAI: a JSON
 * string; Ollama: an object). Decoded exactly once; anything that is not valid JSON stays as
 * the raw string so the validator can report it, instead of being coerced to `{}`. The one
 * exception is an empty string: servers send `arguments: ""` for a call to a tool without
 * parameters, and that means "no arguments", not malformed ones.
 *
 * JSON nested deeper than the bound is not decoded either (core/json-text.ts says why): a
 * model's such string stays raw for the validator to refuse, and the proxy's request parsers
 * turn `tooDeep` into the caller's 400 (request-body.ts `decodeArgumentsField`).
 */
import { MAX_DECODED_JSON_DEPTH, parseJsonText } from "../core/json-text.js";

/**
 * `value` is the decoded arguments (or `raw` as given); `tooDeep` says the string held JSON
 * nested deeper than `maxDepth`, which is then left undecoded.
 *
 * @example
 * readToolArguments('{"city":"Paris"}', 64); // { value: { city: "Paris" }, tooDeep: false }
 * readToolArguments("[".repeat(100) + "]".repeat(100), 64).tooDeep; // true
 */
export function readToolArguments(raw: unknown, maxDepth: number): { value: unknown; tooDeep: boolean } {
  if (typeof raw !== "string") return { value: raw, tooDeep: false };
  if (raw.trim() === "") return { value: {}, tooDeep: false };
  const parsed = parseJsonText(raw, maxDepth);
  if (parsed.ok) return { value: parsed.value, tooDeep: false };
  return { value: raw, tooDeep: parsed.reason === "depth" };
}

/**
 * @example
 * decodeToolArguments('{"city":"Paris"}') // → { city: "Paris" }
 * decodeToolArguments('{"city":')         // → '{"city":' (kept for the validator)
 * decodeToolArguments({ city: "Paris" })  // → { city: "Paris" }
 * decodeToolArguments("")                 // → {}
 */
export function decodeToolArguments(raw: unknown, maxDepth = MAX_DECODED_JSON_DEPTH): unknown {
  return readToolArguments(raw, maxDepth).value;
}
