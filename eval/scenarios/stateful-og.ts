/**
 * The stateful variants of the nine OG scenarios, written by hand as forge writes them: each
 * run gets fresh records its tools read and change, decoy records a wrong argument silently
 * finds, and a `validate` that checks the state the tools left as well as the terminal answer.
 * None of them depends on the plain scenarios.
 */
import type { EvalScenario } from "../scenario.js";
import { STATEFUL_OG_PLUMBING } from "./stateful-og-plumbing.js";
import { STATEFUL_OG_QUALITY } from "./stateful-og-quality.js";
import { STATEFUL_OG_REASONING } from "./stateful-og-reasoning.js";

/** @example STATEFUL_OG.map((s) => s.name) // ["basic_2step_stateful", ..., "data_gap_recovery_stateful"] */
export const STATEFUL_OG: EvalScenario[] = [...STATEFUL_OG_PLUMBING, ...STATEFUL_OG_QUALITY, ...STATEFUL_OG_REASONING];
