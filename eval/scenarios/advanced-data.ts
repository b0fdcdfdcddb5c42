/**
 * forge's advanced_reasoning family over data: `data_gap_recovery_extended` and
 * `argument_transformation` (one file each), plain and stateful.
 */
import type { EvalScenario } from "../scenario.js";
import { argumentTransformation, argumentTransformationStateful } from "./argument-transformation.js";
import { dataGapRecoveryExtended, dataGapRecoveryExtendedStateful } from "./data-gap-extended.js";

export * from "./argument-transformation.js";
export * from "./data-gap-extended.js";

/** @example ADVANCED_DATA.map((s) => s.name) // ["data_gap_recovery_extended", "argument_transformation", "data_gap_recovery_extended_stateful", "argument_transformation_stateful"] */
export const ADVANCED_DATA: EvalScenario[] = [dataGapRecoveryExtended, argumentTransformation, dataGapRecoveryExtendedStateful, argumentTransformationStateful];
