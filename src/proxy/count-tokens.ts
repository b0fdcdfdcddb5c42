/**
 * POST /v1/messages/count_tokens: the input tokens of a Messages request as the backend would
 * receive it. The backend's own tokenizer when its client has one (`LLMClient.countTokens`:
 * llama-server's template and tokenizer, Anthropic's own endpoint); otherwise, or when that
 * fails, the project's chars/4 estimate — never silently: `x-forge-token-count` says which
 * (`backend` or `estimate`) and `x-forge-token-count-reason` why the tokenizer was not used.
 */
import { estimatePromptTokensChars4 } from "../context/token-estimator.js";
import type { CountTokensOptions, LLMClient } from "../core/llm.js";
import { serializeMessages } from "../core/wire-messages.js";
import { clientName } from "../core/response-contract.js";
import type { ToolSpec } from "../core/tool.js";
import { isBackendError } from "../clients/http.js";
import { parseCountTokensRequest } from "./anthropic-request.js";
import { HttpError } from "../proxy-request/http-error.js";
import { requestToolDefs } from "../proxy-request/request-tools.js";

export interface CountTokensRouteOptions {
  /** Count for the caller's `model` (the proxy's `forwardModel`, default true); false: the client's own. */
  forwardModel?: boolean;
  /** The caller's own backend credential (the proxy's `forwardAuth`). */
  apiKey?: string | undefined;
}

type Count = { tokens: number; source: "backend" } | { tokens: number; source: "estimate"; reason: string };

/**
 * The count_tokens answer for one parsed JSON body: `{ input_tokens }` with the headers that
 * say where the number came from. A malformed body is the same 400 `/v1/messages` gives.
 *
 * @example
 * app.post("/v1/messages/count_tokens", limit, async (c) => countTokens(parseJsonObject(await c.req.text()), client, c.req.raw.signal));
 * // → 200 { "input_tokens": 187 }, x-forge-token-count: backend
 */
export async function countTokens(body: Record<string, unknown>, client: LLMClient, signal: AbortSignal, options: CountTokensRouteOptions = {}): Promise<Response> {
  const request = parseCountTokensRequest(body);
  requestToolDefs(request.tools); // a malformed schema is the caller's 400, as on /v1/messages
  // What the backend would be sent: tool_choice "none" sends no tools (see request-run.ts).
  const tools = request.toolChoice === "none" ? [] : request.tools;
  const model = options.forwardModel !== false && request.model !== "" ? request.model : undefined;
  const counted = await backendTokenCount(client, serializeMessages(request.messages, client.apiFormat), tools, { signal, model, apiKey: options.apiKey });
  const count: Count = counted.source === "backend" ? counted : { ...counted, tokens: estimatePromptTokensChars4(request.messages, tools) };
  const headers: Record<string, string> = { "x-forge-token-count": count.source };
  if (count.source === "estimate") headers["x-forge-token-count-reason"] = count.reason;
  return Response.json({ input_tokens: count.tokens }, { headers });
}

/**
 * The backend's own count of a prompt (`LLMClient.countTokens`), or why the estimate must do:
 * no tokenizer endpoint, or it failed (said once per reason in the log). Used by count_tokens
 * and by the context-window check (backend-windows.ts).
 *
 * @example
 * const counted = await backendTokenCount(client, wire, tools, { signal, model: undefined, apiKey: undefined });
 * counted.source === "backend" ? counted.tokens : estimate;
 */
export async function backendTokenCount(
  client: LLMClient,
  wire: ReturnType<typeof serializeMessages>,
  tools: ToolSpec[],
  options: { signal: AbortSignal; model: string | undefined; apiKey: string | undefined },
): Promise<{ tokens: number; source: "backend" } | { source: "estimate"; reason: string }> {
  if (typeof client.countTokens !== "function") return fallback(`${clientName(client)} has no tokenizer endpoint`);
  const call: CountTokensOptions = { signal: options.signal };
  if (options.model !== undefined) call.model = options.model;
  if (options.apiKey !== undefined) call.apiKey = options.apiKey;
  let tokens: unknown;
  try {
    tokens = await client.countTokens(wire, tools.length > 0 ? tools : undefined, call);
  } catch (error) {
    if (options.signal.aborted) throw new HttpError(503, "api_error", `Request cancelled: ${String(options.signal.reason)}`);
    return fallback(`backend tokenizer failed: ${describe(error)}`);
  }
  if (typeof tokens !== "number" || !Number.isInteger(tokens) || tokens < 0) {
    return fallback(`backend tokenizer returned ${String(tokens).slice(0, 40)}, not a token count`);
  }
  return { tokens, source: "backend" };
}

function describe(error: unknown): string {
  if (isBackendError(error)) {
    if (error.statusCode === 0) return "backend unreachable";
    if (error.statusCode === 408) return "timed out";
    if (error.statusCode !== 200) return `HTTP ${error.statusCode}`;
  }
  return error instanceof Error ? error.message : String(error);
}

const warned = new Set<string>();

/** The estimate, said once per reason in the log too: a tokenizer that never works should be noticed. */
function fallback(reason: string): { source: "estimate"; reason: string } {
  // Header values must be visible ASCII; error texts may hold anything.
  const clean = reason.replace(/[^\x20-\x7e]+/g, " ").replace(/\s+/g, " ").trim().slice(0, 200);
  if (!warned.has(clean) && warned.size < 100) {
    warned.add(clean);
    console.warn(`forge-ts proxy: token counts fall back to the chars/4 estimate (${clean})`);
  }
  return { source: "estimate", reason: clean };
}
