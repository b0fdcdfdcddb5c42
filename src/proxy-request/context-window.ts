/**
 * The backend's context window, judged without I/O: whether a prompt fits, which Ollama
 * `num_ctx` a request gets, and the error a prompt that cannot fit is answered with — each
 * client API's own context-length error, which agents answer by compacting their history.
 *
 * Decisions (docs/proxy.md, "The backend's window"):
 * - A prompt is refused when the prompt alone is over the window, as Anthropic's "prompt is too
 *   long" is. Output that does not fit after it is cut at the window by the backend; refusing
 *   prompt + max_tokens would make an agent that asks for a large max_tokens (Claude Code asks
 *   for 32k) compact forever against a small local window.
 * - num_ctx climbs a ladder (powers of two from 4,096, then the model's maximum) and never goes
 *   down for a model: Ollama reloads a model whenever num_ctx changes, so sizes that swing with
 *   each request would reload it again and again; the ladder bounds the reloads to a handful.
 */
import { HttpError } from "./http-error.js";

/** The smallest num_ctx the proxy sends (Ollama's own long-standing default). */
export const NUM_CTX_FLOOR = 4096;

/** Output tokens planned for when the caller sets no max_tokens. */
export const DEFAULT_OUTPUT_TOKENS = 2048;

/**
 * The estimate is chars/4; real tokenizers count code at ~3 and CJK at 1–2 chars a token. In
 * this band around the window a backend tokenizer decides, when the backend has one.
 */
export const EXACT_COUNT_BAND = { low: 0.75, high: 1.5 } as const;

/**
 * Whether a prompt of `promptTokens` fits a window of `contextLength` (unknown: it does).
 *
 * @example
 * promptFits(9_000, 8_192); // false
 */
export function promptFits(promptTokens: number, contextLength: number | undefined): boolean {
  return contextLength === undefined || promptTokens <= contextLength;
}

/**
 * Whether an estimate is too close to the window to trust (see EXACT_COUNT_BAND).
 *
 * @example
 * needsExactCount(7_000, 8_192); // true
 * needsExactCount(1_000, 8_192); // false
 */
export function needsExactCount(estimate: number, contextLength: number | undefined): boolean {
  return contextLength !== undefined && estimate >= contextLength * EXACT_COUNT_BAND.low && estimate <= contextLength * EXACT_COUNT_BAND.high;
}

/**
 * The output tokens a caller asked for at most (OpenAI names; the Anthropic front door maps its
 * `max_tokens` to them); undefined when it set none.
 *
 * @example
 * requestedOutputTokens({ max_completion_tokens: 512, max_tokens: 64 }); // 512
 */
export function requestedOutputTokens(body: Readonly<Record<string, unknown>>): number | undefined {
  for (const key of ["max_completion_tokens", "max_tokens"]) {
    const value = body[key];
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}

export interface NumCtxInput {
  promptTokens: number;
  /** The caller's max output tokens (undefined: DEFAULT_OUTPUT_TOKENS). */
  outputTokens?: number | undefined;
  /** The model's maximum (undefined: unknown; Ollama clamps a larger num_ctx itself). */
  contextLength?: number | undefined;
  /** The num_ctx last sent for this model on this backend: never go below it. */
  previous?: number | undefined;
}

/**
 * The num_ctx for one Ollama request: prompt + output, rounded up the ladder, at least the
 * last one used for the model, at most the model's maximum.
 *
 * @example
 * numCtxFor({ promptTokens: 20_000, outputTokens: 4_000, contextLength: 40_960 }); // 32768
 * numCtxFor({ promptTokens: 100, previous: 16_384 }); // 16384
 */
export function numCtxFor(input: NumCtxInput): number {
  const needed = input.promptTokens + (input.outputTokens ?? DEFAULT_OUTPUT_TOKENS);
  let rung = NUM_CTX_FLOOR;
  while (rung < needed) rung *= 2;
  const size = Math.max(rung, input.previous ?? 0);
  return input.contextLength === undefined ? size : Math.min(size, input.contextLength);
}

/**
 * The caller's 400 for a prompt over the window, in each API's own words: OpenAI's
 * `context_length_exceeded` (the Chat Completions message, `param: "messages"`) and Anthropic's
 * `invalid_request_error` "prompt is too long: N tokens > M maximum".
 *
 * @example
 * contextLengthError(9_000, 8_192).body("anthropic");
 * // { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 9000 tokens > 8192 maximum" } }
 */
export function contextLengthError(promptTokens: number, contextLength: number): HttpError {
  return new HttpError(
    400,
    "invalid_request_error",
    `This model's maximum context length is ${contextLength} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
    {},
    {
      code: "context_length_exceeded",
      param: "messages",
      dialects: {
        anthropic: { message: `prompt is too long: ${promptTokens} tokens > ${contextLength} maximum` },
        // The Responses API's own words; Codex compacts on the code.
        responses: { message: `Your input exceeds the context window of this model (${promptTokens} tokens > ${contextLength}). Please adjust your input and try again.`, param: "input" },
      },
    },
  );
}

/**
 * The caller's pass-through fields with Ollama's `options.num_ctx` set (the path the eval's
 * per-scenario num_ctx takes too: RequestOverrides.body `options` reach Ollama's `options`).
 *
 * @example
 * withNumCtx({ temperature: 0, options: { top_k: 20 } }, 8192);
 * // { temperature: 0, options: { top_k: 20, num_ctx: 8192 } }
 */
export function withNumCtx(body: Readonly<Record<string, unknown>> | undefined, numCtx: number): Record<string, unknown> {
  const options = body?.options;
  return { ...body, options: { ...(typeof options === "object" && options !== null && !Array.isArray(options) ? options : {}), num_ctx: numCtx } };
}
