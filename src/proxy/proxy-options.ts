/**
 * What createProxy accepts, and the checks that turn a wrong value into an
 * InvalidArgumentError naming the option.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { normalOrigin } from "../server/browser-guard.js";
import type { LLMClient } from "../core/llm.js";
import { budgetOption } from "../guardrails/budget.js";
import type { ForgeMetrics } from "../telemetry/metrics.js";
import type { ProxyConfig } from "./fleet/proxy-config.js";
import type { ProxyGuardrailOptions } from "../proxy-request/request-context.js";
import { parsePolicy, type ProxyPolicyInput } from "../proxy-request/request-policy.js";

export interface ProxyOptions extends Partial<Omit<ProxyGuardrailOptions, "policy">> {
  /**
   * Workflow policy (required steps before a terminal tool, prerequisites, loop break),
   * judged from each request's own message history: no session state (request-policy.ts).
   */
  policy?: ProxyPolicyInput;
  /** The backend. Give this or `config`. */
  client?: LLMClient;
  /**
   * A fleet of backends (src/proxy/fleet/proxy-config.ts; `loadProxyConfig` reads the file):
   * model names and aliases routed to the least busy backend serving them, with per-backend
   * limits, a wait queue and failover. Give this or `client`.
   */
  config?: ProxyConfig;
  /** Required from callers as `Authorization: Bearer …` or `x-api-key` when set. */
  apiKey?: string;
  /**
   * Pass the caller's credential (`Authorization: Bearer …` / `x-api-key`) to the backend in
   * place of the client's own (default false). Cannot be combined with `apiKey`, which uses
   * that same header to admit callers.
   */
  forwardAuth?: boolean;
  /** Send the caller's model name to the backend (default true); false pins the client's model. Single `client` only. */
  forwardModel?: boolean;
  /** Largest accepted request body in bytes (default 16 MiB → 413). */
  bodyLimitBytes?: number;
  /** Keep-alive interval for streams while the proxy validates (default 5,000 ms). */
  keepAliveMs?: number;
  /** The model name reported when the caller sent none (default: the client's `model`; with `config`, its first model). */
  model?: string;
  /**
   * Where the proxy counts (served at `GET /metrics`). Default: a set of its own without Node's
   * process metrics, so several proxies in one process do not each install process collectors;
   * pass `createForgeMetrics()` to include them, or a set shared with other surfaces.
   */
  metrics?: ForgeMetrics;
  /**
   * What GET /metrics and GET /forge/stats answer, in place of this process's own: a worker of
   * `forge-ts proxy --workers` answers for all of them (src/cli/proxy-cluster.ts).
   */
  views?: ProxyViews;
  /** Record prompts and answers on the request's spans (default false: they are the caller's data). */
  traceContent?: boolean;
  /**
   * The backends' context window in tokens, in place of what they report (Ollama /api/show,
   * llama-server /props); a fleet backend's own `contextLength` in the config wins. Prompts over
   * it get the caller's API's context-length error; Ollama's num_ctx is sized up to it.
   */
  contextLength?: number;
  /**
   * Origins (`scheme://host[:port]`) whose web pages may call the proxy from a browser: their
   * requests get CORS headers and preflights are answered. Any other page's request is refused
   * (403), as is, on a loopback bind, a Host that is not a loopback name (DNS rebinding).
   */
  corsOrigins?: readonly string[];
  /** Open sockets at most (default 1,024); more are closed as they connect. */
  maxConnections?: number;
  /** How long a client may take to send a request's headers (default 10,000 ms); then its socket is cut. */
  headersTimeoutMs?: number;
}

const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The options, checked, with their defaults.
 *
 * @example
 * checkOptions({ client, maxRetries: 2 }).guardrails.maxRetries; // 2
 */
export function checkOptions(o: ProxyOptions) {
  if (typeof o !== "object" || o === null) throw new InvalidArgumentError("options", "createProxy needs an options object");
  if ((o.client === undefined) === (o.config === undefined)) {
    throw new InvalidArgumentError("client", "give exactly one of `client` (one backend) or `config` (a fleet: see loadProxyConfig)");
  }
  if (o.config !== undefined) {
    if (typeof o.config !== "object" || o.config === null) throw new InvalidArgumentError("config", "must be a proxy config object (loadProxyConfig reads one from a file)");
    if (o.forwardModel !== undefined) throw new InvalidArgumentError("forwardModel", "applies to a single client; with `config` each backend gets its configured model name");
  }
  const client = o.client as Partial<LLMClient> | undefined;
  if (o.client !== undefined && (!client || typeof client.send !== "function" || (client.apiFormat !== "openai" && client.apiFormat !== "ollama"))) {
    throw new InvalidArgumentError("client", "must be an LLMClient (OllamaClient, LlamafileClient, OpenAICompatClient, AnthropicClient, ...)");
  }
  for (const key of ["rescueEnabled", "injectRespondTool", "forwardModel", "forwardAuth", "traceContent"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") throw new InvalidArgumentError(key, "must be a boolean");
  }
  if (o.apiKey !== undefined && (typeof o.apiKey !== "string" || o.apiKey === "")) throw new InvalidArgumentError("apiKey", "must be a non-empty string");
  if (o.apiKey !== undefined && o.forwardAuth === true) {
    throw new InvalidArgumentError("forwardAuth", "cannot be combined with apiKey: both read the caller's credential header");
  }
  if (o.metrics !== undefined && (typeof o.metrics !== "object" || o.metrics === null || typeof (o.metrics as { label?: unknown }).label !== "function")) {
    throw new InvalidArgumentError("metrics", "must be a metric set made by createForgeMetrics()");
  }
  const positive = (name: string, v: unknown, fallback: number) => {
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) throw new InvalidArgumentError(name, `must be a positive integer, got ${String(v)}`);
    return v;
  };
  return {
    guardrails: {
      maxRetries: budgetOption("maxRetries", o.maxRetries, 3),
      maxToolErrors: budgetOption("maxToolErrors", o.maxToolErrors, 2),
      rescueEnabled: o.rescueEnabled ?? true,
      injectRespondTool: o.injectRespondTool ?? false,
      policy: o.policy === undefined ? undefined : parsePolicy(o.policy),
    } satisfies ProxyGuardrailOptions,
    bodyLimit: positive("bodyLimitBytes", o.bodyLimitBytes, DEFAULT_BODY_LIMIT),
    keepAliveMs: positive("keepAliveMs", o.keepAliveMs, 5_000),
    forwardModel: o.forwardModel ?? true,
    forwardAuth: o.forwardAuth ?? false,
    traceContent: o.traceContent ?? false,
    contextLength: o.contextLength === undefined ? undefined : positive("contextLength", o.contextLength, 0),
    corsOrigins: corsOrigins(o.corsOrigins),
    connectionLimits: { maxConnections: o.maxConnections === undefined ? undefined : positive("maxConnections", o.maxConnections, 0), headersTimeoutMs: o.headersTimeoutMs === undefined ? undefined : positive("headersTimeoutMs", o.headersTimeoutMs, 0) },
    model: o.model ?? (o.client as { model?: unknown } | undefined)?.model,
  };
}


function corsOrigins(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidArgumentError("corsOrigins", "must be a list of origins, e.g. [\"https://app.example.com\"]");
  return value.map((v, i) => {
    const origin = typeof v === "string" ? normalOrigin(v) : undefined;
    if (origin === undefined) throw new InvalidArgumentError(`corsOrigins[${i}]`, `${JSON.stringify(v)} is not an origin: scheme://host[:port], no path (e.g. http://localhost:3000)`);
    return origin;
  });
}

/** Answers for a whole set of proxy processes (see `ProxyOptions.views`). */
export interface ProxyViews {
  metrics(): Promise<Response>;
  stats(): Promise<unknown>;
  /** Fields added to a GET /health answer (the live workers). */
  health?(): Record<string, unknown>;
}
