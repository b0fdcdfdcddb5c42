/**
 * The `LLMResponse` contract, checked where a client's answer enters the loop (the `infer`
 * service). A client that breaks it fails the run with a ClientContractError naming the client
 * and the bad value, instead of a TypeError somewhere inside the statechart. Everything that
 * passes is plain JSON, so the context (which keeps `lastResponse`) stays snapshot-safe.
 */
import { z } from "zod";
import { ClientContractError, safeString } from "./errors.js";
import type { LLMResponse } from "./llm.js";
import { jsonIssue } from "./json-value.js";

export const UsageSchema = z.looseObject({ inputTokens: z.number().nonnegative(), outputTokens: z.number().nonnegative() });

/** One call as a client reports it (`args` unchecked until validation). */
export const ToolCallSchema = z.looseObject({
  tool: z.string(),
  args: z.unknown(),
  id: z.string().optional(),
  reasoning: z.string().optional(),
});

/**
 * Unknown extra fields pass (clients may add their own); `rescued: true` marks calls a client
 * rescued from text itself.
 *
 * @example
 * LLMResponseSchema.safeParse({ type: "text", content: "hi" }).success; // true
 */
export const LLMResponseSchema = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("tool_calls"),
    toolCalls: z.array(ToolCallSchema),
    reasoning: z.string().optional(),
    usage: UsageSchema.optional(),
    rescued: z.literal(true).optional(),
  }),
  z.looseObject({
    type: z.literal("text"),
    content: z.string(),
    reasoning: z.string().optional(),
    usage: UsageSchema.optional(),
  }),
]);

const PREVIEW_CHARS = 300;

/** A short, never-throwing rendering of what a client returned (BigInt and cycles included). */
export function previewValue(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  } catch {
    text = undefined; // a cycle or hostile depth: fall back to the type tag below
  }
  text ??= value === undefined ? "undefined" : safeString(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}… (${text.length} chars)` : text;
}

/** The name a contract error uses for a client: its class, as users construct it. */
export function clientName(client: unknown): string {
  try {
    const name = (client as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === "string" && name.length > 0 ? name : "LLMClient";
  } catch {
    return "LLMClient";
  }
}

/**
 * `value` as an LLMResponse, or a ClientContractError.
 *
 * @example
 * assertLLMResponse({ type: "text", content: "hi" }, "OllamaClient"); // the response
 * assertLLMResponse(null, "OllamaClient"); // throws ClientContractError
 */
export function assertLLMResponse(value: unknown, client: string): LLMResponse {
  // The usual answer is checked by hand (once per model call); zod judges the rest and words its issues.
  const parsed = isPlainResponse(value) ? undefined : LLMResponseSchema.safeParse(value);
  if (parsed && !parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${i.message}`);
    throw new ClientContractError(client, issues, previewValue(value));
  }
  const problem = jsonIssue(value);
  if (problem) throw new ClientContractError(client, [`the response is not plain JSON: ${problem}`], previewValue(value));
  // The checked original, not zod's copy: extra fields a client adds are kept as they were.
  return value as LLMResponse;
}

/**
 * A response of plain objects that LLMResponseSchema certainly accepts (a strict subset of it: a
 * property test holds it to that); false sends the value to the schema itself.
 */
export function isPlainResponse(value: unknown): boolean {
  if (!isPlain(value)) return false;
  const r = value as Record<string, unknown>;
  if (!isOptionalString(r.reasoning) || !isOptionalUsage(r.usage)) return false;
  if (r.type === "text") return typeof r.content === "string";
  if (r.type !== "tool_calls" || !Array.isArray(r.toolCalls) || (r.rescued !== undefined && r.rescued !== true)) return false;
  for (const call of r.toolCalls as unknown[]) {
    if (!isPlain(call)) return false;
    const c = call as Record<string, unknown>;
    if (typeof c.tool !== "string" || !isOptionalString(c.id) || !isOptionalString(c.reasoning)) return false;
  }
  return true;
}

const isPlain = (v: unknown): boolean => typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === "string";
const isCount = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && v >= 0;
function isOptionalUsage(v: unknown): boolean {
  if (v === undefined) return true;
  return isPlain(v) && isCount((v as Record<string, unknown>).inputTokens) && isCount((v as Record<string, unknown>).outputTokens);
}

/**
 * A stream chunk must at least be an object with a string `type` before the service looks at it.
 *
 * @example
 * assertStreamChunk({ type: "text_delta", content: "x" }, "OllamaClient");
 */
export function assertStreamChunk(value: unknown, client: string): { type: string } {
  if (typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string") {
    return value as { type: string };
  }
  throw new ClientContractError(client, ["a stream chunk must be an object with a string type"], previewValue(value));
}
