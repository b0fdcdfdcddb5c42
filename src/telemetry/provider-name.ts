/**
 * What a chat span says about the backend: `gen_ai.provider.name` and `gen_ai.request.model`,
 * derived from the client. The client adapter is the only thing that knows its backend, so a
 * client may state its provider (`providerName`); forge's own clients are known by class.
 */
import type { LLMClient } from "../core/llm.js";
import { clientName } from "../core/response-contract.js";

/** forge-ts's clients by class name → the GenAI semantic conventions' provider names (ours where they have none). */
const PROVIDERS: Record<string, string> = {
  OllamaClient: "ollama",
  OpenAICompatClient: "openai",
  AnthropicClient: "anthropic",
  LlamafileClient: "llama.cpp",
  SimulatedClient: "simulated",
  ScriptedClient: "scripted",
};

/**
 * The provider name of a client: its own `providerName` when it has one, else by forge-ts
 * class, else its wire format ("openai" or "ollama"), which is what it speaks.
 *
 * @example
 * providerName(new OllamaClient({ model: "qwen3:8b" })); // "ollama"
 */
export function providerName(client: LLMClient): string {
  const own = (client as { providerName?: unknown }).providerName;
  if (typeof own === "string" && own !== "") return own;
  return PROVIDERS[clientName(client)] ?? client.apiFormat;
}

/**
 * The model a client asks for (`client.model`), or its provider name when it names none (a
 * simulated or scripted model).
 *
 * @example
 * requestModel(new OpenAICompatClient({ model: "Qwen/Qwen3-8B", baseUrl })); // "Qwen/Qwen3-8B"
 */
export function requestModel(client: LLMClient): string {
  const model = (client as { model?: unknown }).model;
  return typeof model === "string" && model !== "" ? model : providerName(client);
}
