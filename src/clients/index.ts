/** Backend adapters: one file per backend, all behind the LLMClient interface. */
export { OllamaClient, type OllamaClientOptions } from "./ollama.js";
export { LlamafileClient, ggufStem, type LlamafileClientOptions, type LlamafileMode } from "./llamafile.js";
export { OpenAICompatClient, type OpenAICompatClientOptions } from "./openai-compat.js";
export { AnthropicClient, type AnthropicClientOptions } from "./anthropic.js";
export {
  SimulatedClient,
  FAULT_PROFILES,
  CORRECTION_DAMPING,
  type SimulatedClientOptions,
  type SimulatedTurn,
  type Oracle,
  type OracleStep,
  type OracleView,
  type FaultKind,
  type FaultProfile,
} from "./simulated.js";
export { schemaOracle } from "./schema-oracle.js";
export { ScriptedClient, type ScriptedClientOptions, type ScriptedRequest, type ScriptedResponse } from "./scripted.js";
export { decodeToolArguments } from "./tool-args.js";
