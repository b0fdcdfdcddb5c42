/**
 * Any OpenAI-compatible chat-completions endpoint (vLLM, LM Studio, gateways): native tools,
 * bearer auth, usage capture, and the same content rescue as every other client.
 */
import { registerSecret } from "../core/redact.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { ContextLengthOptions, LLMClient, LLMResponse, ModelInfo, RequestOverrides, SendOptions, StreamChunk, Usage } from "../core/llm.js";
import type { WireMessage } from "../core/wire-messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";
import { checkNumber, checkPositiveInt, checkRecord, checkString, checkUrl, httpCall, isBackendError, joinUrl, parseJsonBody, requireOptionsObject } from "./http.js";
import { listOpenAIModels, sendChatCompletion, streamChatCompletion, toolsForRescue, toWireTools, type ChatCallContext } from "./openai-wire.js";
import { authHeaders, openAIBody } from "./request-overrides.js";
import { trackedStream } from "./stream-retry.js";

export interface OpenAICompatClientOptions {
  model: string;
  /** Up to and including the version segment, e.g. "http://127.0.0.1:8000/v1". */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  temperature?: number;
  timeoutMs?: number;
  /** Merged into every request body (e.g. { top_k: 20, chat_template_kwargs: {...} }). */
  extraBody?: Record<string, unknown>;
  headers?: Record<string, string>;
  /**
   * The server's context window in tokens, when it does not report one (most do not; vLLM's
   * /models `max_model_len` does). Reported by getContextLength in place of asking.
   */
  contextLength?: number;
}

const RESERVED = new Set(["model", "messages", "stream", "tools"]);

/**
 * @example
 * const client = new OpenAICompatClient({ model: "Qwen/Qwen3-8B", baseUrl: "http://127.0.0.1:8000/v1", apiKey: process.env.VLLM_KEY });
 * const response = await client.send(serialized, [weather.spec]);
 * client.lastUsage; // { inputTokens, outputTokens }
 */
export class OpenAICompatClient implements LLMClient {
  readonly apiFormat = "openai" as const;
  readonly model: string;
  readonly baseUrl: string;
  lastUsage: Usage | undefined;
  streamRetries = 0;
  private readonly temperature: number | undefined;
  private readonly timeoutMs: number;
  private readonly extraBody: Record<string, unknown>;
  private readonly headers: Record<string, string>;
  private readonly contextLength: number | undefined;

  constructor(options: OpenAICompatClientOptions) {
    const o = requireOptionsObject(options, "OpenAICompatClient");
    this.model = checkString(o.model, "model", true)!;
    this.baseUrl = checkUrl(o.baseUrl, "baseUrl");
    const apiKey = checkString(o.apiKey, "apiKey", false);
    this.temperature = checkNumber(o.temperature, "temperature", 0, 2);
    this.timeoutMs = checkPositiveInt(o.timeoutMs, "timeoutMs") ?? 300_000;
    this.contextLength = checkPositiveInt(o.contextLength, "contextLength");
    this.extraBody = { ...checkRecord(o.extraBody, "extraBody") };
    for (const key of Object.keys(this.extraBody)) {
      if (RESERVED.has(key)) throw new InvalidArgumentError(`extraBody.${key}`, "is set by the client itself");
    }
    const headers = checkRecord(o.headers, "headers") ?? {};
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== "string") throw new InvalidArgumentError(`headers.${name}`, "must be a string");
    }
    this.headers = { ...(headers as Record<string, string>) };
    if (apiKey !== undefined) this.headers.authorization = `Bearer ${apiKey}`;
    registerSecret(apiKey);
  }

  async send(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): Promise<LLMResponse> {
    const response = await sendChatCompletion(this.body(messages, tools, false, options.request), this.context(tools, options));
    this.lastUsage = response.usage;
    return response;
  }

  sendStream(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): AsyncGenerator<StreamChunk> {
    const ctx = this.context(tools, options);
    return trackedStream(() => streamChatCompletion(this.body(messages, tools, true, options.request), ctx), this);
  }

  /**
   * The configured `contextLength`; else from GET {baseUrl}/models: vLLM's `max_model_len` (or a
   * `context_length` field) of the model's entry (`options.model`, default the client's);
   * undefined when the server does not say (or has no /models).
   */
  async getContextLength(options: ContextLengthOptions = {}): Promise<number | undefined> {
    if (this.contextLength !== undefined) return this.contextLength;
    const model = options.model ?? this.model;
    let data: unknown;
    try {
      const res = await httpCall(joinUrl(this.baseUrl, "/models"), { method: "GET", headers: this.headers, timeoutMs: this.timeoutMs, signal: options.signal });
      data = parseJsonBody(await res.text(), res.statusCode);
    } catch (error) {
      if (isBackendError(error) && error.statusCode === 404) return undefined;
      throw error;
    }
    const entries = isPlainObject(data) && Array.isArray(data.data) ? data.data.filter(isPlainObject) : [];
    const entry = entries.find((e) => e.id === model);
    const length = entry?.max_model_len ?? entry?.context_length;
    return typeof length === "number" && Number.isInteger(length) && length > 0 ? length : undefined;
  }

  /** GET {baseUrl}/models. */
  async listModels(options: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    return listOpenAIModels(joinUrl(this.baseUrl, "/models"), { headers: this.headers, timeoutMs: this.timeoutMs, signal: options.signal });
  }

  private context(tools: ToolSpec[] | undefined, options: SendOptions): ChatCallContext {
    return {
      url: joinUrl(this.baseUrl, "/chat/completions"),
      headers: authHeaders(this.headers, options.request),
      timeoutMs: this.timeoutMs,
      signal: options.signal,
      traceContext: options.traceContext,
      ...toolsForRescue(tools),
    };
  }

  private body(messages: WireMessage[], tools: ToolSpec[] | undefined, stream: boolean, request: RequestOverrides | undefined): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.model, messages, stream };
    if (tools && tools.length > 0) body.tools = toWireTools(tools);
    if (this.temperature !== undefined) body.temperature = this.temperature;
    if (stream) body.stream_options = { include_usage: true };
    return openAIBody({ ...body, ...this.extraBody }, request);
  }
}
