/**
 * One place that turns command-line backend choices into an LLMClient, shared by
 * `npm start` (the demo), the eval harness, `forge-ts worker` and `forge-ts mcp`.
 */
import { AnthropicClient } from "../clients/anthropic.js";
import { FAULT_PROFILES } from "../clients/fault-profiles.js";
import { schemaOracle } from "../clients/schema-oracle.js";
import { SimulatedClient, type Oracle } from "../clients/simulated.js";
import { LlamafileClient, type LlamafileMode } from "../clients/llamafile.js";
import { OllamaClient } from "../clients/ollama.js";
import { OpenAICompatClient } from "../clients/openai-compat.js";
import { BackendError, InvalidArgumentError, SchemaOracleError } from "../core/errors.js";
import type { LLMClient } from "../core/llm.js";
import type { Workflow } from "../core/workflow.js";
import { getSamplingDefaults } from "../models/sampling.js";
import { positiveInt } from "./int-flag.js";

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
  /**
   * The backend's credential, sent with every request the client makes: `Authorization: Bearer`
   * (ollama, llamaserver, llamafile, openai), `x-api-key` (anthropic). The key of a caller the
   * proxy forwards (--forward-auth) replaces it per request.
   */
  apiKey?: string;
  ggufPath?: string;
  /** Per request: headers wait and idle gap between body chunks (default 300,000 ms). */
  timeoutMs?: number;
  /**
   * Where this command's key comes from (`--api-key`, `--backend-api-key`, a config's
   * `backends.gpu0.apiKey`; none: only the variable), for the errors about it: none given, or
   * one that cannot go in a header.
   */
  apiKeyFlag?: string;
  /** The proxy's --forward-auth: each caller brings the key, so none is needed at start. */
  keyFromCaller?: boolean;
  /** `--recommended-sampling`: the model card's sampling values (ollama, llamaserver, llamafile). */
  recommendedSampling?: boolean;
}

/** @example assertBackend("ollama") */
export function assertBackend(name: string): asserts name is BackendName {
  if (!(BACKENDS as readonly string[]).includes(name)) {
    throw new InvalidArgumentError("backend", `unknown backend "${name}"; use one of ${BACKENDS.join(", ")}`);
  }
}

/** The backend flags as given (or from their FORGE_* variables), before they are checked. */
export interface BackendFlags {
  model?: string | undefined;
  baseUrl?: string | undefined;
  mode?: string | undefined;
  think?: string | undefined;
  apiKey?: string | undefined;
  timeout?: string | undefined;
  /** The command's key flag, when it is not `--api-key`. */
  apiKeyFlag?: string | undefined;
  recommendedSampling?: boolean | undefined;
}

/**
 * The key a backend takes from the environment when no flag gives one: OPENAI_API_KEY for the
 * openai backend, ANTHROPIC_API_KEY for anthropic, none for the others — an OpenAI key is not
 * sent to a local llama-server or Ollama (nor to whoever runs the proxy in front of one).
 *
 * @example
 * backendKeyFromEnv("openai", { OPENAI_API_KEY: "sk-1" }); // "sk-1"
 * backendKeyFromEnv("llamaserver", { OPENAI_API_KEY: "sk-1" }); // undefined
 */
export function backendKeyFromEnv(backend: BackendName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const variable = backend === "openai" ? "OPENAI_API_KEY" : backend === "anthropic" ? "ANTHROPIC_API_KEY" : undefined;
  const value = variable === undefined ? undefined : env[variable];
  return value === undefined || value === "" ? undefined : value;
}

/** A key given to the simulated model is a mistake to say, not a flag to drop: it has no server to send one to. */
function refuseSimKey(f: Pick<BackendFlags, "apiKey" | "apiKeyFlag">): void {
  if (f.apiKey === undefined) return;
  throw new InvalidArgumentError(f.apiKeyFlag ?? "--api-key", "the simulated model (--backend sim) has no server to send a key to; leave the key out, or pick a real backend");
}

/**
 * A real backend's options from its flags (`forge-ts run`, `runs resume`, `worker`): the model is
 * required, `--think` is true or false, the key falls back to OPENAI_API_KEY (openai) or
 * ANTHROPIC_API_KEY (anthropic) only; a key for the simulated model is refused.
 */
export function backendOptionsFrom(backend: BackendName, f: BackendFlags): BackendOptions {
  if (backend === "sim") refuseSimKey(f);
  if (!f.model) throw new InvalidArgumentError("--model", "required");
  if (f.think !== undefined && f.think !== "true" && f.think !== "false") throw new InvalidArgumentError("--think", 'use "true" or "false"');
  const apiKey = f.apiKey ?? backendKeyFromEnv(backend);
  return {
    backend,
    model: f.model,
    ...(f.baseUrl ? { baseUrl: f.baseUrl } : {}),
    ...(f.mode ? { mode: f.mode } : {}),
    ...(f.think !== undefined ? { think: f.think === "true" } : {}),
    ...(apiKey ? { apiKey } : {}),
    timeoutMs: positiveInt("timeout", f.timeout, 300_000),
    apiKeyFlag: f.apiKeyFlag ?? "--api-key",
    ...(f.recommendedSampling ? { recommendedSampling: true } : {}),
  };
}

/**
 * The simulated model's `--model`: a fault profile by name (the library's SimulatedClient also
 * takes a FaultProfile object, which a command line cannot pass).
 *
 * @example simProfile(undefined, "clean"); // "clean"
 */
export function simProfile(model: string | undefined, fallback: keyof typeof FAULT_PROFILES): keyof typeof FAULT_PROFILES {
  const profile = model ?? fallback;
  if (!Object.hasOwn(FAULT_PROFILES, profile)) {
    throw new InvalidArgumentError("--model", `the simulated model (--backend sim) takes a fault profile as its model: ${Object.keys(FAULT_PROFILES).join(", ")}; got "${profile}"`);
  }
  return profile as keyof typeof FAULT_PROFILES;
}

export const DEFAULT_BASE_URLS: Partial<Record<BackendName, string>> = {
  ollama: "http://127.0.0.1:11434",
  llamaserver: "http://127.0.0.1:8080/v1",
  llamafile: "http://127.0.0.1:8080/v1",
};

const MODES: readonly LlamafileMode[] = ["native", "prompt", "auto"];

/**
 * Build the client of a real backend ("sim" is built where its oracle is known: runClients, the demo).
 *
 * @example
 * const client = buildClient({ backend: "ollama", model: "qwen3:8b" });
 */
export function buildClient(o: BackendOptions): LLMClient {
  assertBackend(o.backend);
  const baseUrl = o.baseUrl ?? DEFAULT_BASE_URLS[o.backend];
  const timeout = o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {};
  const sampling = o.recommendedSampling ? { recommendedSampling: true } : {};
  if (o.apiKey !== undefined) checkHeaderSafeKey(o.apiKey, o.apiKeyFlag ?? "apiKey");
  const key = o.apiKey ? { apiKey: o.apiKey } : {};
  if (o.recommendedSampling && (o.backend === "openai" || o.backend === "anthropic")) {
    throw new InvalidArgumentError("--recommended-sampling", `the ${o.backend} backend takes no model-card sampling values; ollama, llamaserver and llamafile do`);
  }
  // The clients would throw UnsupportedModelError (exit 1); on a command line it is a flag to drop.
  if (o.recommendedSampling && !getSamplingDefaults(o.ggufPath ?? o.model)) {
    throw new InvalidArgumentError("--recommended-sampling", `forge-ts knows no model-card sampling values for "${o.ggufPath ?? o.model}"; leave the flag out`);
  }
  switch (o.backend) {
    case "ollama":
      return new OllamaClient({ model: o.model, ...(baseUrl ? { baseUrl } : {}), ...(o.think !== undefined ? { think: o.think } : {}), ...key, ...sampling, ...timeout });
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
        ...key,
        ...sampling,
        ...timeout,
      });
    }
    case "openai":
      if (!o.baseUrl) throw new InvalidArgumentError("base-url", "the openai backend needs --base-url (e.g. http://127.0.0.1:8000/v1)");
      return new OpenAICompatClient({ model: o.model, baseUrl: o.baseUrl, ...key, ...timeout });
    case "anthropic":
      assertAnthropicKey(o);
      return new AnthropicClient({ model: o.model, ...key, ...(o.baseUrl ? { baseURL: o.baseUrl } : {}), ...timeout });
    case "sim":
      throw new InvalidArgumentError("backend", "the simulated model is built with its oracle (new SimulatedClient)");
  }
}

/**
 * A key goes into a request header: a line break or other control character (a key file saved
 * with CRLF, a stray paste) would make every request fail as if the backend were unreachable.
 */
function checkHeaderSafeKey(key: string, field: string): void {
  if (key === "") throw new InvalidArgumentError(field, "must be a non-empty string");
  if (/[\u0000-\u001f\u007f]/.test(key)) throw new InvalidArgumentError(field, "contains a line break or other control character (it is sent in an Authorization header); check how the key was pasted or saved");
  if (key.trim() !== key) throw new InvalidArgumentError(field, "begins or ends with a space; give the key alone");
}

/**
 * Anthropic's API refuses every request without a key; asking it for its model list would then
 * report "unreachable", which sends people looking at their network. A custom --base-url (a
 * gateway, a local server) may need none, and the proxy's --forward-auth takes the callers' keys.
 */
function assertAnthropicKey(o: BackendOptions): void {
  if (o.apiKey || o.baseUrl || o.keyFromCaller || process.env.ANTHROPIC_API_KEY) return;
  const how = o.apiKeyFlag ? `give ${o.apiKeyFlag} <key> or set ANTHROPIC_API_KEY` : "set ANTHROPIC_API_KEY";
  throw new InvalidArgumentError(o.apiKeyFlag ?? "ANTHROPIC_API_KEY", `no API key for the anthropic backend: ${how}`);
}

/**
 * Whether a backend answers, asked before a command spends time on it: its model list within
 * `timeoutMs`. Undefined when it answers (or has no list to ask for), else why not, in one line.
 *
 * @example
 * const problem = await unreachable(client, "ollama at http://127.0.0.1:11434");
 * if (problem) { console.error(problem); process.exitCode = 1; }
 */
export async function unreachable(client: LLMClient, label: string, timeoutMs = 5_000): Promise<string | undefined> {
  if (!client.listModels) return undefined;
  try {
    await client.listModels({ signal: AbortSignal.timeout(timeoutMs) });
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const status = error instanceof BackendError ? error.statusCode : 0;
    if (status === 0 || status === 408) return `backend ${label} is unreachable: ${reason}`;
    if (status === 401 || status === 403) return `backend ${label} refused the credentials (HTTP ${status}): ${reason}`;
    return undefined; // it answers HTTP; a server without a model list (404) is still usable
  }
}

/** "ollama qwen3:8b at http://127.0.0.1:11434": how messages name a backend. */
export function backendLabel(o: Pick<BackendOptions, "backend" | "model" | "baseUrl">): string {
  const url = o.baseUrl ?? DEFAULT_BASE_URLS[o.backend];
  return `${o.backend} ${o.model}${url ? ` at ${url}` : ""}`;
}

/** A workflow module as a command loaded it: its Workflow, and the Oracle it exports for the simulated model. */
export interface LoadedWorkflow {
  workflow: Workflow;
  oracle?: Oracle;
  /** The module's path as given, for messages. */
  module?: string;
}

/**
 * The Oracle the simulated model plays for a module: the one it exports, else the schema-driven
 * one (said in one line on stderr, since the runs then show generated arguments, not the
 * module author's). A workflow the schema-driven oracle cannot play is a usage error.
 */
function simulatedOracle(m: LoadedWorkflow): Oracle {
  if (m.oracle) return m.oracle;
  const source = m.module ?? `the module of workflow "${m.workflow.name}"`;
  let oracle: Oracle;
  try {
    oracle = schemaOracle(m.workflow);
  } catch (error) {
    if (!(error instanceof SchemaOracleError)) throw error;
    throw new InvalidArgumentError("--backend", `sim cannot play ${source}, which exports no oracle: ${error.message}; export an Oracle named "oracle" from it`);
  }
  console.error(`forge-ts: ${source} exports no oracle; the simulated model plays a schema-driven one (required steps in order, arguments from each tool's schema, then the terminal tool)`);
  return oracle;
}

/**
 * The model each run gets (`forge-ts run`, `runs`, `worker`, `mcp`), from the backend flags: `sim`
 * plays the Oracle the run's workflow module exports as `oracle`, else the schema-driven one
 * (profile from `--model`: clean, the default, small-model or chaotic); a real backend is asked
 * whether it answers, and `problem` says in one line why not (the caller decides whether that
 * stops it).
 *
 * @example
 * const { clientFor, problem } = await runClients("sim", {}, [await loadWorkflowModule("notes.ts")]);
 * new WorkflowRunner({ client: clientFor(workflow), contextManager });
 */
export async function runClients(
  backend: string | undefined,
  flags: BackendFlags,
  modules: readonly LoadedWorkflow[],
): Promise<{ clientFor: (workflow: Workflow) => LLMClient; label: string; problem?: string }> {
  if (!backend) throw new InvalidArgumentError("--backend", `required (${BACKENDS.join(", ")})`);
  assertBackend(backend);
  if (backend === "sim") {
    refuseSimKey(flags);
    const profile = simProfile(flags.model, "clean");
    if (flags.recommendedSampling) throw new InvalidArgumentError("--recommended-sampling", "the simulated model has no sampling to set; ollama, llamaserver and llamafile take it");
    const oracles = new Map(modules.map((m) => [m.workflow, simulatedOracle(m)]));
    const clientFor = (workflow: Workflow) => {
      const oracle = oracles.get(workflow);
      if (!oracle) throw new InvalidArgumentError("workflow", `"${workflow.name}" is not one of the loaded workflow modules`);
      return new SimulatedClient({ oracle, workflow, profile, seed: 1 });
    };
    return { clientFor, label: `the simulated model (profile ${profile})` };
  }
  const o = backendOptionsFrom(backend, flags);
  const label = backendLabel(o);
  const problem = await unreachable(buildClient(o), label);
  return { clientFor: () => buildClient(o), label, ...(problem ? { problem } : {}) };
}
