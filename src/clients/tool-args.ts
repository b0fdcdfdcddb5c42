/**
 * The one decoder for tool-call arguments as backends send them (OpenAI: a JSON string;
 * Ollama: an object). Decoded exactly once; anything that is not valid JSON stays as the raw
 * string so the validator can report it, instead of being coerced to `{}`. The one exception
 * is an empty string: servers send `arguments: ""` for a call to a tool without parameters,
 * and that means "no arguments", not malformed ones.
 */

/**
 * @example
 * decodeToolArguments('{"city":"Paris"}') // → { city: "Paris" }
 * decodeToolArguments('{"city":')         // → '{"city":' (kept for the validator)
 * decodeToolArguments({ city: "Paris" })  // → { city: "Paris" }
 * decodeToolArguments("")                 // → {}
 */
export function decodeToolArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
