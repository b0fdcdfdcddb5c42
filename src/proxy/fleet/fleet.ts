/**
 * What the proxy serves from: a pool of backends with their health, and the model names callers
 * may use. A fleet config (proxy-config.ts) gives several backends and a name map; a single
 * client is a pool of one that serves every name, so both run through one code path.
 */
import { buildClient } from "../../cli-kit/backends.js";
import { InvalidArgumentError } from "../../core/errors.js";
import type { LLMClient, ModelInfo } from "../../core/llm.js";
import { BackendHealth } from "./backend-health.js";
import { BackendPool } from "./backend-pool.js";
import { pathText, proxyConfigSchema, type ProxyConfig } from "./proxy-config.js";

export interface Fleet {
  pool: BackendPool;
  health: BackendHealth;
  /** Every configured model name and alias, for `GET /v1/models`; undefined for a single client (the backend's own list). */
  models: ModelInfo[] | undefined;
  /** The model a request naming none is reported as ("" when unknown). */
  defaultModel: string;
}

/** A single backend's health is probed at most this often. */
const SINGLE_HEALTH = { intervalMs: 5_000, timeoutMs: 2_000 };

/**
 * @example
 * const fleet = fleetOfOne(new OllamaClient({ model: "qwen3:8b" }), "qwen3:8b");
 */
export function fleetOfOne(client: LLMClient, defaultModel: string): Fleet {
  const backends = [{ name: "backend", client }];
  const health = new BackendHealth(backends, SINGLE_HEALTH);
  return { pool: new BackendPool({ backends, health }), health, models: undefined, defaultModel };
}

/**
 * Build every backend's client (with the same factory as `--backend`) and the name map. A
 * request naming no model goes to `defaultModel` (a name or alias; default the config's first model).
 *
 * @example
 * const fleet = fleetFromConfig(await loadProxyConfig("proxy.json"));
 */
export function fleetFromConfig(config: ProxyConfig, defaultModel?: string): Fleet {
  const parsed = proxyConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidArgumentError("config", `${pathText(issue.path.map((p) => (typeof p === "number" ? p : String(p))))}: ${issue.message}`);
  }
  const { backends: defs, models, queue, health: healthOptions } = parsed.data;
  const backends = Object.entries(defs).map(([name, d]) => ({
    name,
    client: buildClient({
      backend: d.backend,
      model: d.model,
      ...(d.baseUrl !== undefined ? { baseUrl: d.baseUrl } : {}),
      ...(d.mode !== undefined ? { mode: d.mode } : {}),
      ...(d.think !== undefined ? { think: d.think } : {}),
      ...(d.recommendedSampling !== undefined ? { recommendedSampling: d.recommendedSampling } : {}),
      ...(d.apiKey !== undefined ? { apiKey: d.apiKey } : {}),
      ...(d.timeoutMs !== undefined ? { timeoutMs: d.timeoutMs } : {}),
      // A key that cannot go in a header (a line break from a CRLF .env) is named by its place in the config.
      apiKeyFlag: pathText(["backends", name, "apiKey"]),
      // Not refused here: callers may bring the key (--forward-auth), and health shows a backend that refuses.
      keyFromCaller: true,
    }),
    // The client holds the backend's apiKey and sends it on every request it makes (chat, model
    // list and health probes, /props, /api/show, token counts, the Ollama door's pass-through).
    model: d.model,
    maxConcurrent: d.maxConcurrent,
    contextLength: d.contextLength,
  }));
  const routes = new Map<string, string[]>();
  const names: ModelInfo[] = [];
  for (const [model, entry] of Object.entries(models)) {
    for (const id of [model, ...entry.aliases]) {
      routes.set(id, entry.backends);
      names.push({ id, ownedBy: "forge-ts" });
    }
  }
  const fallback = defaultModel ?? Object.keys(models)[0]!;
  const route = routes.get(fallback);
  if (route === undefined) throw new InvalidArgumentError("model", `"${fallback}" is not a model name or alias of the config`);
  routes.set("", route);
  const health = new BackendHealth(backends, healthOptions);
  return { pool: new BackendPool({ backends, routes, queue, health }), health, models: names, defaultModel: fallback };
}
