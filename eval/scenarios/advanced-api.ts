/**
 * forge's advanced_reasoning family over APIs and decisions: `inconsistent_api_recovery` and
 * `grounded_synthesis` (one file each), plain and stateful.
 */
import type { EvalScenario } from "../scenario.js";
import { groundedSynthesis, groundedSynthesisStateful } from "./grounded-synthesis.js";
import { inconsistentApiRecovery, inconsistentApiRecoveryStateful } from "./inconsistent-api.js";

export * from "./grounded-synthesis.js";
export * from "./inconsistent-api.js";

/** @example ADVANCED_API.map((s) => s.name) // ["inconsistent_api_recovery", "grounded_synthesis", "inconsistent_api_recovery_stateful", "grounded_synthesis_stateful"] */
export const ADVANCED_API: EvalScenario[] = [inconsistentApiRecovery, groundedSynthesis, inconsistentApiRecoveryStateful, groundedSynthesisStateful];
