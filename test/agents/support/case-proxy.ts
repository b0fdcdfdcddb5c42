/**
 * forge-ts proxy in front of one case's scripted model, as `forge-ts proxy --backend ollama
 * --model qwen3:8b --base-url <model>` builds it, and the proxy counters the cases assert on.
 * The case runner (agents, in their namespace) and the client-library suites share it.
 */
import { OllamaClient } from "../../../src/clients/ollama.js";
import { createProxy, type ProxyServer } from "../../../src/proxy/create-proxy.js";
import type { ProxyStatsSnapshot } from "../../../src/proxy/proxy-stats.js";
import { MODEL } from "./fake-ollama.js";

/** Calls rescued from text, retries after a nudge, retries run out, failures. */
export type ProxyCounts = Pick<ProxyStatsSnapshot, "requests" | "rescues" | "retries" | "exhausted" | "failed">;

/**
 * @example
 * const proxy = caseProxy(model.url);
 * const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
 */
export function caseProxy(modelUrl: string): ProxyServer {
  return createProxy({ client: new OllamaClient({ model: MODEL, baseUrl: modelUrl }), model: MODEL, forwardModel: true });
}

/**
 * @example
 * proxyCounts(proxy.stats()); // { requests: 2, rescues: 1, retries: 0, exhausted: 0, failed: 0 }
 */
export const proxyCounts = ({ requests, rescues, retries, exhausted, failed }: ProxyStatsSnapshot): ProxyCounts => ({ requests, rescues, retries, exhausted, failed });
