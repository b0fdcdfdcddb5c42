/**
 * RequestOverrides (a proxy caller's model, tool_choice, sampling fields and credential)
 * mapped onto each backend's request. One module, so every client agrees on what a caller may
 * change: fields the client owns (messages, tools, streaming) are never taken from a caller.
 */
import type { RequestOverrides, ToolChoice } from "../core/llm.js";
import { isPlainObject } from "../core/json-value.js";
import { assignOwn, setOwn } from "../core/set-own.js";

/**
 * Body fields the client sets for every request: a caller's value would break the exchange (the
 * runner refuses them as request defaults; a proxy caller's are never forwarded).
 *
 * @example CLIENT_OWNED_FIELDS.has("stream") // true
 */
export const CLIENT_OWNED_FIELDS: ReadonlySet<string> = new Set(["model", "messages", "stream", "stream_options", "tools", "tool_choice"]);

/**
 * The body fields (OpenAI names) the Messages API has an equivalent for (anthropicParams).
 *
 * @example ANTHROPIC_BODY_FIELDS.has("min_p") // false
 */
export const ANTHROPIC_BODY_FIELDS: ReadonlySet<string> = new Set(["max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "stop", "reasoning_effort"]);

/**
 * An OpenAI chat-completions body with the caller's fields merged over the client's.
 * `tool_choice` goes only with native tools (servers reject it without `tools`).
 *
 * @example
 * openAIBody({ model: "m", messages, stream: false, temperature: 0.7 }, { model: "x", body: { temperature: 0 } })
 * // → { model: "x", messages, stream: false, temperature: 0 }
 */
export function openAIBody(body: Record<string, unknown>, overrides: RequestOverrides | undefined): Record<string, unknown> {
  if (!overrides) return body;
  const out = { ...body };
  for (const [key, value] of Object.entries(overrides.body ?? {})) if (!CLIENT_OWNED_FIELDS.has(key) && !OLLAMA_ONLY_FIELDS.has(key)) setOwn(out, key, value);
  if (overrides.model !== undefined) out.model = overrides.model;
  if (overrides.toolChoice !== undefined && Array.isArray(out.tools) && out.tools.length > 0) out.tool_choice = overrides.toolChoice;
  return out;
}

/** OpenAI sampling names → Ollama `options` keys (the same meaning, Ollama's spelling). */
const OLLAMA_OPTIONS: Record<string, string> = {
  temperature: "temperature",
  top_p: "top_p",
  top_k: "top_k",
  min_p: "min_p",
  seed: "seed",
  stop: "stop",
  max_tokens: "num_predict",
  max_completion_tokens: "num_predict",
  frequency_penalty: "frequency_penalty",
  presence_penalty: "presence_penalty",
  repeat_penalty: "repeat_penalty",
};

/**
 * An Ollama `options` object split into what has an OpenAI name (`num_predict` → `max_tokens`,
 * `temperature`, `stop`, …: every backend takes those) and the rest (`num_ctx`, `mirostat`,
 * `num_gpu`, …: Ollama's own, sent only to an Ollama backend as `options`). ollamaBody maps the
 * first part back, so an Ollama backend gets exactly the options the caller sent.
 *
 * @example
 * splitOllamaOptions({ num_predict: 64, num_ctx: 8192 }); // { openai: { max_tokens: 64 }, rest: { num_ctx: 8192 } }
 */
export function splitOllamaOptions(options: Readonly<Record<string, unknown>>): { openai: Record<string, unknown>; rest: Record<string, unknown> } {
  const out = { openai: {} as Record<string, unknown>, rest: {} as Record<string, unknown> };
  for (const [key, value] of Object.entries(options)) {
    const name = OPENAI_NAME_OF_OPTION.get(key);
    if (name !== undefined) out.openai[name] = value;
    else setOwn(out.rest, key, value);
  }
  return out;
}

/** Ollama option → the one OpenAI name for it (max_tokens, not max_completion_tokens). */
const OPENAI_NAME_OF_OPTION: ReadonlyMap<string, string> = new Map(
  Object.entries(OLLAMA_OPTIONS)
    .filter(([openai]) => openai !== "max_completion_tokens")
    .map(([openai, ollama]) => [ollama, openai]),
);

/**
 * Body fields only an Ollama server reads (an Ollama door's caller sends them): never sent to an
 * OpenAI-compatible server, which has no meaning for them and, at OpenAI itself, refuses an
 * unknown field. What has an OpenAI meaning was mapped to its OpenAI name already.
 *
 * @example OLLAMA_ONLY_FIELDS.has("keep_alive") // true
 */
export const OLLAMA_ONLY_FIELDS: ReadonlySet<string> = new Set(["options", "keep_alive", "think"]);

/**
 * The body fields (OpenAI names) an Ollama /api/chat request takes, mapped or as given; any
 * other is dropped by ollamaBody. Callers that must not lose a field silently check with this.
 *
 * @example OLLAMA_BODY_FIELDS.has("top_k") // true; OLLAMA_BODY_FIELDS.has("logit_bias") // false
 */
export const OLLAMA_BODY_FIELDS: ReadonlySet<string> = new Set([...Object.keys(OLLAMA_OPTIONS), "options", "keep_alive", "think", "format", "response_format", "reasoning_effort"]);

/**
 * An Ollama /api/chat body with the caller's fields mapped in: sampling into `options`,
 * `response_format` into `format`, `reasoning_effort` into `think` (Ollama's thinking level),
 * Ollama's own `options`/`keep_alive`/`format`/`think` as given.
 * Fields with no Ollama equivalent are left out (Ollama's own OpenAI endpoint ignores them too).
 *
 * @example
 * ollamaBody({ model: "m", messages, stream: false }, { body: { max_tokens: 64, stop: "\n" } })
 * // → { model: "m", messages, stream: false, options: { num_predict: 64, stop: ["\n"] } }
 */
export function ollamaBody(body: Record<string, unknown>, overrides: RequestOverrides | undefined): Record<string, unknown> {
  if (!overrides) return body;
  const out = { ...body };
  const options: Record<string, unknown> = isPlainObject(out.options) ? { ...out.options } : {};
  for (const [key, value] of Object.entries(overrides.body ?? {})) {
    if (value === null || value === undefined) continue;
    // Own keys only: a caller's "constructor" field must not read Object.prototype's.
    const option = Object.hasOwn(OLLAMA_OPTIONS, key) ? OLLAMA_OPTIONS[key] : undefined;
    if (option !== undefined) options[option] = key === "stop" && typeof value === "string" ? [value] : value;
    else if (key === "options" && isPlainObject(value)) assignOwn(options, value);
    // The caller's `think` (an Ollama door's: a boolean or a level) replaces the client's own.
    else if (key === "keep_alive" || key === "format" || key === "think") out[key] = value;
    // Ollama's thinking level ("low" | "medium" | "high", gpt-oss and kin) rides on `think`.
    else if (key === "reasoning_effort") out.think = value;
    else if (key === "response_format" && isPlainObject(value)) {
      const format = ollamaFormat(value);
      if (format !== undefined) out.format = format;
    }
  }
  if (Object.keys(options).length > 0) out.options = options;
  if (overrides.model !== undefined) out.model = overrides.model;
  return out;
}

function ollamaFormat(responseFormat: Record<string, unknown>): unknown {
  if (responseFormat.type === "json_object") return "json";
  const spec = responseFormat.json_schema;
  if (responseFormat.type === "json_schema" && isPlainObject(spec) && isPlainObject(spec.schema)) return spec.schema;
  return undefined;
}

/** The Messages API's tool_choice for a neutral one ("none" sends no tools at all). */
export function anthropicToolChoice(choice: ToolChoice): { type: "auto" } | { type: "any" } | { type: "tool"; name: string } | undefined {
  if (choice === "auto") return { type: "auto" };
  if (choice === "required") return { type: "any" };
  if (typeof choice === "object") return { type: "tool", name: choice.function.name };
  return undefined;
}

/**
 * Messages API params with the caller's fields mapped in (max_tokens, temperature, top_p,
 * top_k, stop → stop_sequences, reasoning_effort → output_config.effort, tool_choice); others
 * have no Anthropic equivalent.
 *
 * @example
 * anthropicParams({ model: "claude", max_tokens: 4096, messages }, { body: { max_tokens: 64, stop: "END" } })
 * // → { model: "claude", max_tokens: 64, messages, stop_sequences: ["END"] }
 */
export function anthropicParams<P extends { model: string; max_tokens: number; tools?: unknown[] }>(
  params: P,
  overrides: RequestOverrides | undefined,
): P {
  if (!overrides) return params;
  const out: Record<string, unknown> = { ...params };
  const body = overrides.body ?? {};
  for (const key of ["max_tokens", "temperature", "top_p", "top_k"]) if (body[key] !== undefined && body[key] !== null) out[key] = body[key];
  if (body.max_tokens == null && typeof body.max_completion_tokens === "number") out.max_tokens = body.max_completion_tokens;
  if (typeof body.stop === "string") out.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop)) out.stop_sequences = body.stop;
  if (typeof body.reasoning_effort === "string") out.output_config = { ...(out.output_config as object | undefined), effort: body.reasoning_effort };
  if (overrides.model !== undefined) out.model = overrides.model;
  if (overrides.toolChoice !== undefined && Array.isArray(params.tools) && params.tools.length > 0) {
    const choice = anthropicToolChoice(overrides.toolChoice);
    if (choice !== undefined) out.tool_choice = choice;
  }
  return out as P;
}

/**
 * Headers for one request: the caller's credential, when it brings one, replaces the client's
 * `Authorization`.
 */
export function authHeaders(headers: Record<string, string> | undefined, overrides: RequestOverrides | undefined): Record<string, string> | undefined {
  if (overrides?.apiKey === undefined) return headers;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (name.toLowerCase() !== "authorization") out[name] = value;
  out.authorization = `Bearer ${overrides.apiKey}`;
  return out;
}
