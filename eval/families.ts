/**
 * Scenario families: the one grouping both the simulated model's calibration (eval/sim-profile.ts)
 * and the report's per-family view use, read from a scenario's (or a record's) tags.
 */

/** Families in the order a scenario's tags are matched against them (first wins). */
export const SCENARIO_FAMILIES = ["mcp", "human", "advanced", "compaction", "model_quality", "plumbing"] as const;
export type ScenarioFamily = (typeof SCENARIO_FAMILIES)[number];

/**
 * A scenario's family from its tags; one with none of them (the compaction chain's baseline) is plumbing.
 *
 * @example familyOf(["stateful", "advanced", "reasoning"]) // "advanced"
 */
export function familyOf(tags: readonly string[]): ScenarioFamily {
  return SCENARIO_FAMILIES.find((f) => tags.includes(f)) ?? "plumbing";
}
