/**
 * Card-recommended sampling values per model family, keyed on the three identity forms a
 * caller uses: Ollama tags ("qwen3:14b-q4_K_M"), GGUF stems ("Qwen3-8B-Q4_K_M") and llamafile
 * stems ("Mistral-Nemo-Instruct-2407.Q4_K_M"). Opt-in (`recommendedSampling: true`).
 *
 * Matching: the identity is normalised (directory and `.gguf`/`.llamafile` dropped, lower-cased,
 * `:`, `_` and spaces turned into `-`), then the first family rule whose pattern matches the
 * start wins. Rules are ordered most specific first, so "qwen3-coder" is seen before "qwen3".
 * The quantisation suffix never matters. Families whose cards give no values are absent on
 * purpose (unknown → UnsupportedModelError when opted in), never guessed.
 */
import { UnsupportedModelError } from "../core/errors.js";
import { consoleLogger, type ForgeLogger } from "../core/logger.js";

/** Sampling fields, camelCase; clients map them onto their wire names. */
export interface SamplingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repeatPenalty?: number;
  presencePenalty?: number;
}

export const SAMPLING_KEYS = ["temperature", "topP", "topK", "minP", "repeatPenalty", "presencePenalty"] as const;

interface FamilyRule {
  family: string;
  pattern: RegExp;
  params: Readonly<SamplingParams>;
}

const R = (family: string, pattern: RegExp, params: SamplingParams): FamilyRule => ({ family, pattern, params: Object.freeze(params) });

export const SAMPLING_RULES: readonly FamilyRule[] = [
  // https://huggingface.co/Qwen/Qwen3-4B-Thinking-2507 — "Temperature=0.6, TopP=0.95, TopK=20, and MinP=0"
  R("qwen3-thinking-2507", /^qwen3-\d+b(-a\d+b)?-thinking-2507/, { temperature: 0.6, topP: 0.95, topK: 20, minP: 0 }),
  // https://huggingface.co/Qwen/Qwen3-4B-Instruct-2507 — "Temperature=0.7, TopP=0.8, TopK=20, and MinP=0"
  R("qwen3-instruct-2507", /^qwen3-\d+b(-a\d+b)?-instruct-2507/, { temperature: 0.7, topP: 0.8, topK: 20, minP: 0 }),
  // https://huggingface.co/Qwen/Qwen3-Coder-Next — temperature=1.0, top_p=0.95, top_k=40
  R("qwen3-coder-next", /^qwen3-coder-next/, { temperature: 1.0, topP: 0.95, topK: 40 }),
  // https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct — temperature=0.7, top_p=0.8, top_k=20, repetition_penalty=1.05
  R("qwen3-coder", /^qwen3-coder($|-)/, { temperature: 0.7, topP: 0.8, topK: 20, repeatPenalty: 1.05 }),
  // https://huggingface.co/Qwen/Qwen3-8B (same text on Qwen3-14B) — thinking mode, forge's default:
  // "Temperature=0.6, TopP=0.95, TopK=20, and MinP=0"
  R("qwen3", /^qwen3($|-\d+(\.\d+)?b($|-))/, { temperature: 0.6, topP: 0.95, topK: 20, minP: 0 }),
  // https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/generation_config.json — the card has no
  // prose recommendation; Qwen ships temperature 0.7, top_p 0.8, top_k 20, repetition_penalty 1.05
  R("qwen2.5", /^qwen2\.5($|-)/, { temperature: 0.7, topP: 0.8, topK: 20, repeatPenalty: 1.05 }),
  // https://huggingface.co/mistralai/Ministral-3-8B-Instruct-2512 and .../Ministral-3-14B-Instruct-2512 —
  // "temperature below 0.1" for production; 0.05 sits inside that range
  R("ministral-3-instruct", /^ministral-3-(8|14)b-instruct/, { temperature: 0.05 }),
  // https://huggingface.co/mistralai/Ministral-3-8B-Reasoning-2512 — temperature 0.7
  R("ministral-3-8b-reasoning", /^ministral-3-8b-reasoning/, { temperature: 0.7 }),
  // https://huggingface.co/mistralai/Ministral-3-14B-Reasoning-2512 — temperature 1.0
  R("ministral-3-14b-reasoning", /^ministral-3-14b-reasoning/, { temperature: 1.0 }),
  // https://huggingface.co/mistralai/Mistral-Nemo-Instruct-2407 — "We recommend to use a temperature of 0.3"
  R("mistral-nemo", /^mistral-nemo($|-)/, { temperature: 0.3 }),
  // https://huggingface.co/mistralai/Mistral-Small-3.2-24B-Instruct-2506 (and the 2501/2503 Small 3 / 3.1
  // cards) — "a relatively low temperature, such as temperature=0.15"
  R("mistral-small-3", /^mistral-small(-?3(\.[12])?)?($|-24b)/, { temperature: 0.15 }),
  // https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/generation_config.json (and the
  // Llama-3.2-1B/3B-Instruct ones) — the card is silent; Meta ships temperature 0.6, top_p 0.9
  R("llama-3.1/3.2", /^(meta-)?llama-?3\.[12]($|-)/, { temperature: 0.6, topP: 0.9 }),
  // https://huggingface.co/google/gemma-3-12b-it (generation_config: top_k 64, top_p 0.95) and
  // https://unsloth.ai/docs/models/tutorials/gemma-3-how-to-run-and-fine-tune — per the Gemma team:
  // temperature 1.0, top_k 64, top_p 0.95, min_p 0.0
  R("gemma-3", /^gemma-?3($|-)/, { temperature: 1.0, topK: 64, topP: 0.95, minP: 0 }),
  // https://huggingface.co/zai-org/GLM-4.6 — "For general evaluations, we recommend using a sampling
  // temperature of 1.0" (generation_config.json: temperature 1.0)
  R("glm-4.6", /^glm-?4\.6($|-)/, { temperature: 1.0 }),
  // https://huggingface.co/openai/gpt-oss-20b (and github.com/openai/gpt-oss) — "temperature=1.0 and top_p=1.0"
  R("gpt-oss", /^gpt-oss($|-)/, { temperature: 1.0, topP: 1.0 }),
  // Intentionally absent (no sampling recommendation on the card or in a shipped generation config
  // that we could verify): Phi-4-mini, Granite 3.x, GLM-4.5/4.7, Mistral 7B v0.3. Opting in for them
  // raises UnsupportedModelError; pass explicit values instead.
];

/**
 * Normalise a model identity for rule matching.
 *
 * @example
 * normalizeModelId("/models/Qwen3-8B-Q4_K_M.gguf"); // "qwen3-8b-q4-k-m"
 */
export function normalizeModelId(model: string): string {
  const base = model.trim().split(/[\\/]/).pop() ?? "";
  return base
    .replace(/\.(gguf|llamafile)$/i, "")
    .toLowerCase()
    .replace(/[:_\s]+/g, "-");
}

/** The family rule a model matches, if any. */
export function findSamplingRule(model: string): FamilyRule | undefined {
  const id = normalizeModelId(model);
  return SAMPLING_RULES.find((r) => r.pattern.test(id));
}

/**
 * Card-recommended values for a model, or `undefined` when forge-ts knows none (a fresh copy).
 *
 * @example
 * getSamplingDefaults("qwen3:14b-q4_K_M"); // { temperature: 0.6, topP: 0.95, topK: 20, minP: 0 }
 */
export function getSamplingDefaults(model: string): SamplingParams | undefined {
  const rule = findSamplingRule(model);
  return rule ? { ...rule.params } : undefined;
}

export interface ResolveSamplingOptions {
  recommendedSampling: boolean;
  /** Caller-given values; each defined field wins over the recommendation. */
  explicit?: SamplingParams;
  logger?: ForgeLogger;
}

const infoLogged = new Set<string>();

/**
 * Apply the opt-in policy: on + known → card values with explicit fields winning one by one;
 * on + unknown → UnsupportedModelError; off → only the explicit fields, with a one-time INFO
 * per model (per process) when card values exist.
 *
 * @example
 * resolveSampling("qwen3:8b", { recommendedSampling: true, explicit: { temperature: 0.2 } });
 * // { temperature: 0.2, topP: 0.95, topK: 20, minP: 0 }
 */
export function resolveSampling(model: string, options: ResolveSamplingOptions): SamplingParams {
  const explicit = definedFields(options.explicit ?? {});
  const defaults = getSamplingDefaults(model);
  if (options.recommendedSampling) {
    if (!defaults) throw new UnsupportedModelError(model);
    return { ...defaults, ...explicit };
  }
  if (defaults && !infoLogged.has(model)) {
    infoLogged.add(model);
    (options.logger ?? consoleLogger).info(
      `Recommended sampling values exist for "${model}" (${JSON.stringify(defaults)}); to use them, pass recommendedSampling: true (forge-ts commands: --recommended-sampling)`,
    );
  }
  return explicit;
}

/** Forget which models were INFO-logged (tests). */
export function resetSamplingInfoLog(): void {
  infoLogged.clear();
}

function definedFields(params: SamplingParams): SamplingParams {
  const out: SamplingParams = {};
  for (const key of SAMPLING_KEYS) {
    const value = params[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}

/** Wire names used by Ollama `options` and llama-server / llamafile request bodies. */
const WIRE_NAMES: Record<Exclude<keyof SamplingParams, "temperature">, string> = {
  topP: "top_p",
  topK: "top_k",
  minP: "min_p",
  repeatPenalty: "repeat_penalty",
  presencePenalty: "presence_penalty",
};

/**
 * Split sampling params into `temperature` and the snake_case extras both Ollama's `options`
 * and llama-server's body understand.
 *
 * @example
 * toWireSampling({ temperature: 0.6, topP: 0.95, topK: 20 });
 * // { temperature: 0.6, extra: { top_p: 0.95, top_k: 20 } }
 */
export function toWireSampling(params: SamplingParams): { temperature?: number; extra: Record<string, number> } {
  const extra: Record<string, number> = {};
  for (const [key, wire] of Object.entries(WIRE_NAMES)) {
    const value = params[key as keyof typeof WIRE_NAMES];
    if (value !== undefined) extra[wire] = value;
  }
  return params.temperature === undefined ? { extra } : { temperature: params.temperature, extra };
}

/**
 * The sampling fields a client sends, in its wire shape: card values when `recommendedSampling`
 * is on, with the caller's own temperature and snake_case extras winning field by field.
 * Clients call this in their constructors, so every way of building one follows one policy.
 *
 * @example
 * clientSampling("qwen3:8b", { recommendedSampling: true, temperature: 0.2, extra: { top_k: 40 } });
 * // { temperature: 0.2, extra: { top_p: 0.95, top_k: 40, min_p: 0 } }
 */
export function clientSampling(
  model: string,
  options: { recommendedSampling?: boolean; temperature?: number; extra?: Record<string, unknown>; logger?: ForgeLogger },
): { temperature?: number; extra: Record<string, unknown> } {
  const resolved = resolveSampling(model, {
    recommendedSampling: options.recommendedSampling ?? false,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const card = toWireSampling(resolved);
  const temperature = options.temperature ?? card.temperature;
  const extra = { ...card.extra, ...(options.extra ?? {}) };
  return temperature === undefined ? { extra } : { temperature, extra };
}
