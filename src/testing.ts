/**
 * `forge-ts/testing`: models that need no backend — the simulated small model, a scripted
 * client, the demo workflow they play, and the schema-driven oracle that plays any workflow.
 */
export {
  SimulatedClient,
  schemaOracle,
  ScriptedClient,
  FAULT_PROFILES,
  CORRECTION_DAMPING,
  type SimulatedClientOptions,
  type ScriptedClientOptions,
  type Oracle,
  type OracleStep,
  type OracleView,
  type FaultKind,
  type FaultProfile,
} from "./clients/index.js";
export { supplierQuoteWorkflow } from "./cli/demo-workflow.js";
