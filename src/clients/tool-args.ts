/**
 * The one decoder for tool-call arguments as backends send them (OpenAI: a JSON string;
 * Ollama: an object). Decoded exactly once; anything that is not valid JSON stays as the raw
 * string so the validator can report it, instead of being coerced to `{}`.
 */

/**
 * @example
 * decodeToolArguments('{"city":"Paris"}') // → { city: "Paris" }
 * decodeToolArguments('{"city":')         // → '{"city":' (kept for the validator)
 * decodeToolArguments({ city: "Paris" })  // → { city: "Paris" }
 */
export function decodeToolArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
