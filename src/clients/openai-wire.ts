/**
 * Shared wire logic: tool specs → wire tools, one raw assistant message → LLMResponse (used by
 * every HTTP client, Ollama included, so send and the stream's FINAL agree by construction),
 * and the OpenAI chat-completions request/stream helpers LlamafileClient and
 * OpenAICompatClient both use.
 */
import { BackendError, StreamError } from "../core/errors.js";
import type { LLMResponse, ModelInfo, StreamChunk, ToolCall, Usage } from "../core/llm.js";
import { MAX_DECODED_JSON_DEPTH } from "../core/json-text.js";
import { isPlainObject, tooDeepPath } from "../core/json-value.js";
import { setOwn } from "../core/set-own.js";
import type { ToolSpec } from "../core/tool.js";
import { extractToolCalls, splitReasoning } from "../parsing/index.js";
import type { Context } from "@opentelemetry/api";
import { httpCall, parseJsonBody } from "./http.js";
import { parseSse } from "./sse.js";
import { decodeToolArguments } from "./tool-args.js";

export interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Ollama and OpenAI-compatible servers take the same tool shape.
 *
 * @example
 * toWireTools([weather.spec]) // → [{ type: "function", function: { name: "get_weather", ... } }]
 */
export function toWireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/** A backend's assistant message, normalized across wire formats before interpretation. */
export interface RawAssistantMessage {
  content: string;
  /** Server-side reasoning (`reasoning_content`, Ollama `thinking`); wins over think tags. */
  reasoning?: string | undefined;
  toolCalls: { name: string; arguments: unknown; id?: string | undefined }[];
}

export interface AssembleOptions {
  availableTools: readonly string[];
  /** Tool name → parameters JSON Schema: types values that text-only formats carry as strings. */
  schemas?: Readonly<Record<string, unknown>> | undefined;
  /** false discards all reasoning; undefined/true capture it. */
  think?: boolean | undefined;
  usage?: Usage | undefined;
}

/**
 * Interpret one assistant message: structured calls win; otherwise the text goes through the
 * rescue parsers (a model that ignored native calling, or prompt-injected mode).
 *
 * @example
 * assembleResponse({ content: '<tool_call>{"name":"a","arguments":{}}</tool_call>', toolCalls: [] }, { availableTools: ["a"] })
 * // → { type: "tool_calls", toolCalls: [{ tool: "a", args: {} }] }
 */
export function assembleResponse(message: RawAssistantMessage, options: AssembleOptions): LLMResponse {
  const split = splitReasoning(message.content);
  let reasoning = nonEmpty(message.reasoning) ?? nonEmpty(split.reasoning);
  let toolCalls: ToolCall[] = message.toolCalls.map((c) => {
    const args = decodeToolArguments(c.arguments);
    // A native call's arguments object deeper than the LLMResponse contract takes (Ollama sends
    // objects, already parsed) becomes a note: the validator answers it with an invalid-arguments
    // nudge the model can act on, where the contract would fail the whole request.
    const call: ToolCall = { tool: c.name, args: tooDeepPath(args, MAX_DECODED_JSON_DEPTH) === undefined ? args : TOO_DEEP_ARGS };
    if (c.id !== undefined && c.id !== "") call.id = c.id;
    return call;
  });
  let rescued = false;
  let format: string | undefined;
  let beside = nonEmpty(split.content);
  const extracted = toolCalls.length === 0 && options.availableTools.length > 0 ? extractToolCalls(split.content, options.availableTools, options.schemas) : undefined;
  // Calls nested deeper than the LLMResponse contract takes stay text: that contract would fail
  // the request for the model's slip, while the validator's own rescue of the same text answers
  // it with the args-too-deep nudge the model can act on.
  if (extracted !== undefined && !extracted.toolCalls.some((c) => tooDeepPath(c.args, MAX_DECODED_JSON_DEPTH) !== undefined)) {
    toolCalls = extracted.toolCalls;
    rescued = toolCalls.length > 0;
    format = extracted.format;
    beside = nonEmpty(extracted.content);
    reasoning ??= nonEmpty(extracted.reasoning);
  }
  const extra: { reasoning?: string; usage?: Usage } = {};
  if (options.think !== false && reasoning !== undefined) extra.reasoning = reasoning;
  if (options.usage !== undefined) extra.usage = options.usage;
  if (toolCalls.length > 0) {
    const calls: LLMResponse = { type: "tool_calls", toolCalls, ...(beside === undefined ? {} : { content: beside }), ...extra };
    return rescued ? { ...calls, rescued: true, ...(format === undefined ? {} : { rescueFormat: format }) } : calls;
  }
  return { type: "text", content: split.content, ...extra };
}

/** What a call's arguments become when they are nested deeper than any tool takes. */
const TOO_DEEP_ARGS = `(arguments nested deeper than ${MAX_DECODED_JSON_DEPTH} levels)`;

function nonEmpty(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}

/** `{ prompt_tokens, completion_tokens }` → Usage, when both are numbers. */
export function parseOpenAIUsage(value: unknown): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const { prompt_tokens: input, completion_tokens: output } = value;
  if (typeof input !== "number" || typeof output !== "number") return undefined;
  return { inputTokens: input, outputTokens: output };
}

/** A non-streamed chat completion's first choice, normalized. */
export function parseChatCompletion(data: unknown, statusCode = 200): { message: RawAssistantMessage; usage?: Usage | undefined } {
  const choice = isPlainObject(data) && Array.isArray(data.choices) ? data.choices[0] : undefined;
  const message = isPlainObject(choice) ? choice.message : undefined;
  if (!isPlainObject(message)) {
    throw new BackendError(statusCode, JSON.stringify(data), "Chat completion has no choices[0].message");
  }
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isPlainObject) : [];
  return {
    message: {
      content: typeof message.content === "string" ? message.content : "",
      reasoning: typeof message.reasoning_content === "string" ? message.reasoning_content : undefined,
      toolCalls: toolCalls.map((c) => {
        const fn = isPlainObject(c.function) ? c.function : {};
        return { name: String(fn.name ?? ""), arguments: fn.arguments, id: typeof c.id === "string" ? c.id : undefined };
      }),
    },
    usage: parseOpenAIUsage(isPlainObject(data) ? data.usage : undefined),
  };
}

/**
 * Accumulates SSE deltas: text by channel, tool calls by `index` (arguments concatenated).
 * `push` returns the delta chunks to forward; `message()` is the assembled whole.
 */
export class OpenAIStreamAssembler {
  private content = "";
  private reasoning = "";
  private readonly calls = new Map<number, { name: string; arguments: string; id?: string }>();
  usage: Usage | undefined;
  finishReason: string | undefined;

  constructor(private readonly think?: boolean) {}

  push(data: unknown): StreamChunk[] {
    if (!isPlainObject(data)) throw new StreamError(`Malformed stream: event is not an object: ${JSON.stringify(data)}`);
    this.usage = parseOpenAIUsage(data.usage) ?? this.usage;
    const choice = Array.isArray(data.choices) ? data.choices[0] : undefined;
    if (!isPlainObject(choice)) return [];
    if (typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason;
    const delta = isPlainObject(choice.delta) ? choice.delta : {};
    const out: StreamChunk[] = [];
    if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") {
      this.reasoning += delta.reasoning_content;
      if (this.think !== false) out.push({ type: "text_delta", content: delta.reasoning_content, channel: "reasoning" });
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      this.content += delta.content;
      out.push({ type: "text_delta", content: delta.content, channel: "content" });
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const [position, raw] of delta.tool_calls.entries()) {
        if (!isPlainObject(raw)) throw new StreamError("Malformed stream: tool_calls entry is not an object");
        const index = typeof raw.index === "number" ? raw.index : position;
        const entry = this.calls.get(index) ?? { name: "", arguments: "" };
        const fn = isPlainObject(raw.function) ? raw.function : {};
        const chunk: StreamChunk & { type: "tool_call_delta" } = { type: "tool_call_delta", content: "", index };
        // Names arrive whole in the first delta; some gateways repeat them, so never append.
        if (typeof fn.name === "string" && fn.name !== "" && entry.name === "") entry.name = chunk.name = fn.name;
        if (typeof raw.id === "string" && raw.id !== "" && entry.id === undefined) entry.id = chunk.id = raw.id;
        if (typeof fn.arguments === "string") entry.arguments += chunk.content = fn.arguments;
        this.calls.set(index, entry);
        out.push(chunk);
      }
    }
    return out;
  }

  message(): RawAssistantMessage {
    const toolCalls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
    return { content: this.content, reasoning: this.reasoning || undefined, toolCalls };
  }
}

export interface ChatCallContext {
  url: string;
  headers?: Record<string, string> | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Sent as trace headers (see HttpCallOptions.traceContext). */
  traceContext?: Context | undefined;
  availableTools: readonly string[];
  schemas?: Readonly<Record<string, unknown>> | undefined;
  think?: boolean | undefined;
}

/**
 * POST a non-streamed chat completion and interpret it.
 *
 * @example
 * const response = await sendChatCompletion({ model, messages, stream: false }, { url, timeoutMs: 60_000, availableTools: [] });
 */
export async function sendChatCompletion(body: Record<string, unknown>, ctx: ChatCallContext): Promise<LLMResponse> {
  const res = await httpCall(ctx.url, { method: "POST", json: body, headers: ctx.headers, timeoutMs: ctx.timeoutMs, signal: ctx.signal, traceContext: ctx.traceContext });
  const { message, usage } = parseChatCompletion(parseJsonBody(await res.text(), res.statusCode), res.statusCode);
  return assembleResponse(message, { availableTools: ctx.availableTools, schemas: ctx.schemas, think: ctx.think, usage });
}

/**
 * One streamed attempt: deltas, then FINAL. Invalid JSON or a stream that stops before
 * `[DONE]`/`finish_reason` is a StreamError (the retry wrapper's business).
 *
 * @example
 * yield* withStreamRetry(() => streamChatCompletion({ ...body, stream: true }, ctx), onRetry);
 */
export async function* streamChatCompletion(body: Record<string, unknown>, ctx: ChatCallContext): AsyncGenerator<StreamChunk> {
  const res = await httpCall(ctx.url, { method: "POST", json: body, headers: ctx.headers, timeoutMs: ctx.timeoutMs, signal: ctx.signal, traceContext: ctx.traceContext });
  const assembler = new OpenAIStreamAssembler(ctx.think);
  let done = false;
  for await (const event of parseSse(res.body)) {
    if (event.event === "error") throw midStreamError(event.data);
    if (event.data === "[DONE]") {
      done = true;
      break;
    }
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch (cause) {
      throw new StreamError(`Malformed stream: invalid JSON event ${JSON.stringify(event.data.slice(0, 200))}`, { cause });
    }
    if (isPlainObject(data) && data.error !== undefined) throw midStreamError(event.data);
    yield* assembler.push(data);
  }
  if (!done && assembler.finishReason === undefined) {
    throw new StreamError("Malformed stream: ended before [DONE] or a finish_reason");
  }
  const response = assembleResponse(assembler.message(), { availableTools: ctx.availableTools, schemas: ctx.schemas, think: ctx.think, usage: assembler.usage });
  yield { type: "final", response };
}

/**
 * An error the server reported inside a 200 stream (`data: {"error": ...}`, `event: error`,
 * llama.cpp's `error: {...}` line) is the backend's answer, not a malformed stream: a
 * BackendError carrying the server's own status code when it gives one (e.g. 400 for
 * llama-server's exceed_context_size_error), else 500.
 */
function midStreamError(data: string): BackendError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = undefined; // Not JSON: the raw text is still the server's message.
  }
  const inner = isPlainObject(parsed) && parsed.error !== undefined ? parsed.error : parsed;
  const code = isPlainObject(inner) ? inner.code : undefined;
  const status = typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500;
  return new BackendError(status, data, `Backend reported an error mid-stream (HTTP ${status}): ${data.slice(0, 500)}`);
}

/**
 * GET an OpenAI-style model list (`{ data: [{ id, owned_by, created }] }`: vLLM, llama-server,
 * LM Studio, gateways).
 *
 * @example
 * await listOpenAIModels("http://127.0.0.1:8080/v1/models", { timeoutMs: 5_000 }); // [{ id: "qwen3-8b", ownedBy: "llamacpp", created: 1735689600 }]
 */
export async function listOpenAIModels(
  url: string,
  options: { headers?: Record<string, string> | undefined; timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<ModelInfo[]> {
  const res = await httpCall(url, { method: "GET", headers: options.headers, timeoutMs: options.timeoutMs, signal: options.signal });
  const text = await res.text();
  const data = parseJsonBody(text, res.statusCode);
  if (!isPlainObject(data) || !Array.isArray(data.data)) throw new BackendError(res.statusCode, text, `${url} did not answer a model list ({ data: [...] })`);
  return data.data.filter(isPlainObject).flatMap((entry): ModelInfo[] => {
    if (typeof entry.id !== "string") return [];
    const info: ModelInfo = { id: entry.id };
    if (typeof entry.owned_by === "string") info.ownedBy = entry.owned_by;
    if (typeof entry.created === "number") info.created = entry.created;
    return [info];
  });
}

/**
 * What the rescue parsers need to know about the tools on offer: their names, and their
 * parameter schemas (to type values that text-only call formats carry as strings).
 *
 * @example
 * const { availableTools, schemas } = toolsForRescue([weather.spec]); // ["get_weather"], { get_weather: {...} }
 */
export function toolsForRescue(tools: readonly ToolSpec[] | undefined): { availableTools: string[]; schemas: Record<string, unknown> } {
  const schemas: Record<string, unknown> = {};
  for (const t of tools ?? []) setOwn(schemas, t.name, t.parameters);
  return { availableTools: (tools ?? []).map((t) => t.name), schemas };
}
