/**
 * `forge-ts/ai-sdk`: forge's request guardrails as an AI SDK 7 language-model middleware. A
 * separate entry because its types come from the optional peer `@ai-sdk/provider` (with `ai` 7
 * to use it), which the main entry must not pull in; at runtime it needs neither.
 */
export { forgeGuardrails, type ForgeGuardrailsOptions } from "./ai-sdk/forge-guardrails.js";
export type { ForgeCallMetadata } from "./ai-sdk/guarded-result.js";
export type { ProxyGuardrailEvent } from "./proxy-request/guardrail-events.js";
export { GuardrailsExhaustedError } from "./core/errors.js";
