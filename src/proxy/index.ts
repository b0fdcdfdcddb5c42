/** The OpenAI- and Anthropic-compatible proxy surface. */
export { createProxy, type ProxyOptions, type ProxyServer } from "./create-proxy.js";
export { HttpError, type Dialect } from "../proxy-request/http-error.js";
export type { ProxyStatsSnapshot } from "./proxy-stats.js";
export type { ProxyAnswer, ProxyOutcome, ProxyRequest, Exhaustion } from "../proxy-request/proxy-request.js";
export { loadProxyConfig, parseProxyConfig, proxyConfigSchema, type ProxyConfig, type ResolvedProxyConfig } from "./fleet/proxy-config.js";
export type { BackendHealthEntry, HealthReport } from "./fleet/backend-health.js";
export { parsePolicy, proxyPolicySchema, type ProxyPolicy, type ProxyPolicyInput } from "../proxy-request/request-policy.js";
export { checkStructuredOutput, extractJsonAnswer, type OutputFormat } from "../guardrails/structured-output.js";
