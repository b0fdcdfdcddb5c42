/**
 * Named fault profiles for the simulated model: how often, per turn, it makes each kind of
 * mistake a small local model makes.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { RESCUE_FORMATS, type RescueFormat } from "../parsing/index.js";

/** Every mistake (plus the reasoning decoration) the simulated model can inject. */
export type FaultKind =
  | "bare_text"
  | "rescue_format"
  | "unknown_tool"
  | "premature_terminal"
  | "prerequisite_violation"
  | "non_object_args"
  | "invalid_args"
  | "repeat_call"
  | "reasoning";

/**
 * Per-turn probabilities. `reasoning` is rolled on its own (it is realism, not a mistake);
 * the other kinds are mutually exclusive — at most one mistake per turn — so their sum must
 * stay <= 1. A kind that cannot apply on a turn (no workflow, no previous success, the
 * correct step is already terminal, ...) is skipped and its share of the turns stays clean.
 */
export interface FaultProfile {
  name: string;
  rates: Partial<Record<FaultKind, number>>;
  /** Rescue formats a rescue_format fault picks from; default: every format we parse. */
  formats?: RescueFormat[];
}

/**
 * The mutually exclusive mistakes, in the fixed order the per-turn roll walks them.
 *
 * @example
 * MISTAKE_KINDS[0]; // "bare_text"
 */
export const MISTAKE_KINDS: readonly Exclude<FaultKind, "reasoning">[] = [
  "bare_text",
  "rescue_format",
  "invalid_args",
  "premature_terminal",
  "unknown_tool",
  "non_object_args",
  "prerequisite_violation",
  "repeat_call",
];

/**
 * Every kind, mistakes first.
 *
 * @example
 * FAULT_KINDS.includes("reasoning"); // true
 */
export const FAULT_KINDS: readonly FaultKind[] = [...MISTAKE_KINDS, "reasoning"];

/**
 * After the model's previous turn drew a correction (a tool-error result or a retry nudge),
 * every mistake rate is multiplied by this: real small models usually fix what they were
 * just told about, so a corrected turn is ~2.5x less likely to go wrong again.
 *
 * @example
 * // small-model right after a retry nudge: bare_text 0.08 → 0.032
 * FAULT_PROFILES["small-model"].rates.bare_text! * CORRECTION_DAMPING;
 */
export const CORRECTION_DAMPING = 0.4;

/**
 * The built-in profiles (per-turn probabilities; "—" = never):
 *
 * | kind                   | clean | small-model | chaotic |
 * |------------------------|-------|-------------|---------|
 * | bare_text              |   —   |    0.08     |  0.12   |
 * | rescue_format          |   —   |    0.09     |  0.14   |
 * | invalid_args           |   —   |    0.05     |  0.10   |
 * | premature_terminal     |   —   |    0.03     |  0.07   |
 * | unknown_tool           |   —   |    0.02     |  0.06   |
 * | non_object_args        |   —   |    0.01     |  0.05   |
 * | prerequisite_violation |   —   |    0.01     |  0.05   |
 * | repeat_call            |   —   |    0.01     |  0.06   |
 * | **total mistakes**     | **0** |  **0.30**   |**0.65** |
 * | reasoning (decoration) |   —   |    0.15     |  0.40   |
 *
 * "small-model" approximates an 8B instruct model at Q4 with native tool calling: most
 * misses are prose instead of a call, a call written as text in its chat template's format,
 * or a wrong/missing argument; now and then it jumps to the terminal tool early.
 * "chaotic" is for stress tests of the loop's guardrails.
 *
 * @example
 * new SimulatedClient({ oracle, workflow, profile: FAULT_PROFILES["small-model"], seed: 7 });
 */
export const FAULT_PROFILES: Record<"clean" | "small-model" | "chaotic", FaultProfile> = {
  clean: { name: "clean", rates: {} },
  "small-model": {
    name: "small-model",
    rates: {
      bare_text: 0.08,
      rescue_format: 0.09,
      invalid_args: 0.05,
      premature_terminal: 0.03,
      unknown_tool: 0.02,
      non_object_args: 0.01,
      prerequisite_violation: 0.01,
      repeat_call: 0.01,
      reasoning: 0.15,
    },
  },
  chaotic: {
    name: "chaotic",
    rates: {
      bare_text: 0.12,
      rescue_format: 0.14,
      invalid_args: 0.1,
      premature_terminal: 0.07,
      unknown_tool: 0.06,
      non_object_args: 0.05,
      prerequisite_violation: 0.05,
      repeat_call: 0.06,
      reasoning: 0.4,
    },
  },
};

/**
 * Resolve a profile name or object and validate it (fail fast on a typo'd kind or a rate
 * outside [0, 1]).
 *
 * @example
 * resolveFaultProfile("chaotic").rates.bare_text; // 0.12
 */
export function resolveFaultProfile(profile: keyof typeof FAULT_PROFILES | FaultProfile | undefined): FaultProfile {
  if (profile === undefined) return FAULT_PROFILES.clean;
  if (typeof profile === "string") {
    const found = (FAULT_PROFILES as Record<string, FaultProfile>)[profile];
    if (!found) {
      throw new InvalidArgumentError("profile", `unknown profile "${profile}"; use one of ${Object.keys(FAULT_PROFILES).join(", ")} or a FaultProfile object`);
    }
    return found;
  }
  if (typeof profile !== "object" || profile === null || typeof profile.name !== "string" || typeof profile.rates !== "object") {
    throw new InvalidArgumentError("profile", "must be a profile name or { name, rates, formats? }");
  }
  let total = 0;
  for (const [kind, rate] of Object.entries(profile.rates)) {
    if (!FAULT_KINDS.includes(kind as FaultKind)) {
      throw new InvalidArgumentError("profile", `rates.${kind} is not a fault kind; use one of ${FAULT_KINDS.join(", ")}`);
    }
    if (typeof rate !== "number" || !(rate >= 0 && rate <= 1)) {
      throw new InvalidArgumentError("profile", `rates.${kind} must be a number in [0, 1], got ${String(rate)}`);
    }
    if (kind !== "reasoning") total += rate;
  }
  if (total > 1 + 1e-9) {
    throw new InvalidArgumentError("profile", `mistake rates sum to ${total.toFixed(3)} (> 1); at most one mistake is injected per turn`);
  }
  if (profile.formats !== undefined) {
    if (!Array.isArray(profile.formats) || profile.formats.length === 0) {
      throw new InvalidArgumentError("profile", "formats must be a non-empty list of rescue formats");
    }
    for (const f of profile.formats) {
      if (!RESCUE_FORMATS.includes(f)) {
        throw new InvalidArgumentError("profile", `formats: "${String(f)}" is not a rescue format; use ${RESCUE_FORMATS.join(", ")}`);
      }
    }
  }
  return profile;
}
