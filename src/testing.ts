/**
 * `forge-ts/testing`: models that need no backend — the simulated small model and its fault
 * profiles, a scripted client, the demo workflow they play, and the schema-driven oracle that
 * plays any workflow. The simulated model's option and oracle types come from `forge-ts`.
 */
export { SimulatedClient, FAULT_PROFILES, CORRECTION_DAMPING, type FaultKind, type FaultProfile } from "./clients/simulated.js";
export { schemaOracle } from "./clients/schema-oracle.js";
export { ScriptedClient, type ScriptedClientOptions } from "./clients/scripted.js";
export { supplierQuoteWorkflow } from "./cli/demo-workflow.js";
