/**
 * Ablation presets: which of the runner's guardrails are switched off. They map onto
 * WorkflowRunner options (and the compaction strategy); nothing is re-implemented here.
 */
import { InvalidArgumentError } from "../src/core/index.js";

export interface AblationConfig {
  name: string;
  rescueEnabled: boolean;
  /** 0 = no retry / unknown-tool nudge. */
  maxRetries: number;
  /** false = neither required-step nor prerequisite enforcement. */
  stepEnforcement: boolean;
  /** 0 = no tool-error recovery. */
  maxToolErrors: number;
  compaction: boolean;
}

// forge's eval defaults: five retries per step, two consecutive failing tool batches.
const REFORGED: AblationConfig = { name: "reforged", rescueEnabled: true, maxRetries: 5, stepEnforcement: true, maxToolErrors: 2, compaction: true };

/** @example ABLATION_PRESETS.bare.rescueEnabled // false */
export const ABLATION_PRESETS = {
  reforged: REFORGED,
  no_rescue: { ...REFORGED, name: "no_rescue", rescueEnabled: false },
  // A rescued call that fails validation needs a nudge to be retried, so forge turns both off together.
  no_nudge: { ...REFORGED, name: "no_nudge", rescueEnabled: false, maxRetries: 0 },
  no_steps: { ...REFORGED, name: "no_steps", stepEnforcement: false },
  no_recovery: { ...REFORGED, name: "no_recovery", maxToolErrors: 0 },
  no_compact: { ...REFORGED, name: "no_compact", compaction: false },
  bare: { name: "bare", rescueEnabled: false, maxRetries: 0, stepEnforcement: false, maxToolErrors: 0, compaction: false },
} as const satisfies Record<string, AblationConfig>;

export type AblationName = keyof typeof ABLATION_PRESETS;

/** @example getAblation("no_rescue").rescueEnabled // false */
export function getAblation(name: string): AblationConfig {
  if (!Object.hasOwn(ABLATION_PRESETS, name)) {
    throw new InvalidArgumentError("ablation", `unknown preset "${name}"; use one of ${Object.keys(ABLATION_PRESETS).join(", ")}`);
  }
  return ABLATION_PRESETS[name as AblationName];
}
