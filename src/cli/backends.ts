/**
 * One place that turns command-line backend choices into an LLMClient, shared by
 * `npm start` (the demo) and the eval harness.
 */
import { AnthropicClient } from "../clients/anthropic.js";
import { LlamafileClient, type LlamafileMode } from "../clients/llamafile.js";
import { OllamaClient } from "../clients/ollama.js";
import { OpenAICompatClient } from "../clients/openai-compat.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { LLMClient } from "../core/llm.js";

export const BACKENDS = ["sim", "ollama", "llamaserver", "llamafile", "openai", "anthropic"] as const;
export type BackendName = (typeof BACKENDS)[number];

export interface BackendOptions {
  backend: BackendName;
  /** Model name (Ollama tag, served model name, Claude model id). */
  model: string;
  baseUrl?: string;
  /** llamaserver / llamafile: "native" | "prompt" | "auto". */
  mode?: string;
  think?: boolean;
  apiKey?: string;
  ggufPath?: string;
}

/** @example assertBackend("ollama") */
export function assertBackend(name: string): asserts name is BackendName {
  if (!(BACKENDS as readonly string[]).includes(name)) {
    throw new InvalidArgumentError("backend", `unknown backend "${name}"; use one of ${BACKENDS.join(", ")}`);
  }
}

export const DEFAULT_BASE_URLS: Partial<Record<BackendName, string>> = {
  ollama: "http://127.0.0.1:11434",
  llamaserver: "http://127.0.0.1:8080/v1",
  llamafile: "http://127.0.0.1:8080/v1",
};

const MODES: readonly LlamafileMode[] = ["native", "prompt", "auto"];

/**
 * Build the client of a real backend ("sim" is built by its caller, who owns the oracle).
 *
 * @example
 * const client = buildClient({ backend: "ollama", model: "qwen3:8b" });
 */
export function buildClient(o: BackendOptions): LLMClient {
  assertBackend(o.backend);
  const baseUrl = o.baseUrl ?? DEFAULT_BASE_URLS[o.backend];
  switch (o.backend) {
    case "ollama":
      return new OllamaClient({ model: o.model, ...(baseUrl ? { baseUrl } : {}), ...(o.think !== undefined ? { think: o.think } : {}) });
    case "llamaserver":
    case "llamafile": {
      if (o.mode !== undefined && !MODES.includes(o.mode as LlamafileMode)) {
        throw new InvalidArgumentError("mode", `use one of ${MODES.join(", ")}`);
      }
      return new LlamafileClient({
        ...(o.ggufPath ? { ggufPath: o.ggufPath } : { model: o.model }),
        ...(baseUrl ? { baseUrl } : {}),
        ...(o.mode ? { mode: o.mode as LlamafileMode } : {}),
        ...(o.think !== undefined ? { think: o.think } : {}),
      });
    }
    case "openai":
      if (!o.baseUrl) throw new InvalidArgumentError("base-url", "the openai backend needs --base-url (e.g. http://127.0.0.1:8000/v1)");
      return new OpenAICompatClient({ model: o.model, baseUrl: o.baseUrl, ...(o.apiKey ? { apiKey: o.apiKey } : {}) });
    case "anthropic":
      return new AnthropicClient({ model: o.model, ...(o.apiKey ? { apiKey: o.apiKey } : {}), ...(o.baseUrl ? { baseURL: o.baseUrl } : {}) });
    case "sim":
      throw new InvalidArgumentError("backend", "the simulated model is built with its oracle (new SimulatedClient)");
  }
}
