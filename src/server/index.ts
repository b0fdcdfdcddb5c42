/** Backends: server lifecycle, budget resolution, sampling defaults, one-call setup. */
export {
  BudgetMode,
  OLLAMA_DEFAULT_CONTEXT,
  OLLAMA_VRAM_TIERS,
  assertBudgetMode,
  halfBudget,
  ollamaTierBudget,
  parsePropsContext,
  resolveOllamaBudget,
  validateManualTokens,
} from "./budget.js";
export { buildLaunchCommand, type LaunchCommand, type LaunchSpec, type ManagedBackend } from "./launch-command.js";
export { consoleLogger, type ForgeLogger } from "../core/logger.js";
export {
  SAMPLING_KEYS,
  SAMPLING_RULES,
  findSamplingRule,
  getSamplingDefaults,
  normalizeModelId,
  resetSamplingInfoLog,
  resolveSampling,
  toWireSampling,
  type ResolveSamplingOptions,
  type SamplingParams,
} from "../models/sampling.js";
export {
  ServerManager,
  type BackendKind,
  type ServerManagerOptions,
  type StartOptions,
  type StartWithBudgetOptions,
} from "./server-manager.js";
export { setupBackend, type BackendSetup, type SetupBackendOptions } from "./setup-backend.js";
export { detectHardware, parseNvidiaSmi, type GpuInfo, type HardwareProfile } from "../context/hardware.js";
