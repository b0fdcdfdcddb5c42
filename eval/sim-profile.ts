/**
 * The simulated model's plumbing mistakes per scenario family. The library's `small-model`
 * profile (src/clients/fault-profiles.ts) slips on 30% of turns whatever the task: right for
 * stress-testing the loop, far too often for an eval. forge's published 8B rows show plumbing
 * misses are rare on short, easy workflows (bare basic_2step 86–100%) and rise with
 * multi-step reasoning and long contexts; the misses that remain are skill mistakes, which
 * each scenario states as its `slips`. So an eval run of the simulated model takes its
 * per-turn fault rates from its scenario's family, scaled by the profile the row names.
 */
import { FAULT_PROFILES, type FaultKind, type FaultProfile } from "../src/clients/fault-profiles.js";
import { InvalidArgumentError } from "../src/core/index.js";
import { familyOf, type ScenarioFamily } from "./families.js";

type Rates = Partial<Record<FaultKind, number>>;

/**
 * Per-turn rates of an ~8B instruct model with native tool calling, per family (the
 * `small-model` calibration; "reasoning" is the chance a turn carries reasoning text):
 *
 * | family        | bare_text | rescue_format | invalid_args | premature | unknown_tool | repeat | total | reasoning |
 * |---------------|-----------|---------------|--------------|-----------|--------------|--------|-------|-----------|
 * | plumbing      | 0.02      | 0.02          | 0.01         | 0.01      | —            | —      | 0.06  | 0.15      |
 * | model_quality | 0.02      | 0.02          | 0.02         | 0.01      | 0.01         | —      | 0.08  | 0.15      |
 * | advanced      | 0.02      | 0.02          | 0.01         | 0.01      | —            | 0.01   | 0.07  | 0.25      |
 * | compaction    | 0.03      | 0.03          | 0.01         | —         | —            | 0.02   | 0.09  | 0.15      |
 * | human, mcp    | 0.02      | 0.02          | 0.01         | 0.01      | —            | —      | 0.06  | 0.15      |
 */
const SMALL_MODEL: Record<ScenarioFamily, Rates> = {
  plumbing: { bare_text: 0.02, rescue_format: 0.02, invalid_args: 0.01, premature_terminal: 0.01, reasoning: 0.15 },
  model_quality: { bare_text: 0.02, rescue_format: 0.02, invalid_args: 0.02, premature_terminal: 0.01, unknown_tool: 0.01, reasoning: 0.15 },
  advanced: { bare_text: 0.02, rescue_format: 0.02, invalid_args: 0.01, premature_terminal: 0.01, repeat_call: 0.01, reasoning: 0.25 },
  compaction: { bare_text: 0.03, rescue_format: 0.03, invalid_args: 0.01, repeat_call: 0.02, reasoning: 0.15 },
  human: { bare_text: 0.02, rescue_format: 0.02, invalid_args: 0.01, premature_terminal: 0.01, reasoning: 0.15 },
  mcp: { bare_text: 0.02, rescue_format: 0.02, invalid_args: 0.01, premature_terminal: 0.01, reasoning: 0.15 },
};

/** How a named profile scales the small-model calibration (mistakes only; reasoning is capped at 1). */
const SCALE: Record<string, number> = { clean: 0, "small-model": 1, chaotic: 3 };

/**
 * The fault profile the simulated model plays in one eval run: its scenario family's rates,
 * scaled for the row's profile name (`clean`, `small-model`, `chaotic`).
 *
 * @example evalFaultProfile("small-model", ["plumbing"]).rates.bare_text // 0.02
 */
export function evalFaultProfile(profile: string, tags: readonly string[]): FaultProfile {
  const scale = SCALE[profile];
  if (scale === undefined) throw new InvalidArgumentError("model", `the simulated model's profiles are ${Object.keys(FAULT_PROFILES).join(", ")}; got "${profile}"`);
  const family = familyOf(tags);
  const rates: Rates = {};
  for (const [kind, rate] of Object.entries(SMALL_MODEL[family]) as [FaultKind, number][]) {
    rates[kind] = kind === "reasoning" ? (scale === 0 ? 0 : Math.min(1, rate * Math.max(1, scale / 2))) : rate * scale;
  }
  return { name: `${profile}/${family}`, rates };
}
