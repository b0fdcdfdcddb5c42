/**
 * Ollama's native function calling on /api/chat (`tools`), NDJSON streaming, the `think`
 * switch, `num_ctx` and the model's trained context length (/api/show). Messages arrive
 * already serialized in the "ollama" format.
 */
import { registerSecret } from "../core/redact.js";
import { clientSampling } from "../models/sampling.js";
import { BackendError, ContextDiscoveryError, InvalidArgumentError, StreamError, ThinkingNotSupportedError } from "../core/errors.js";
import type { ContextLengthOptions, LLMClient, LLMResponse, ModelInfo, SendOptions, StreamChunk, Usage } from "../core/llm.js";
import type { WireMessage } from "../core/wire-messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";
import {
  checkBoolean,
  asForgeLogger,
  checkLogger,
  checkNumber,
  checkPositiveInt,
  checkRecord,
  checkString,
  checkUrl,
  httpCall,
  isBackendError,
  joinUrl,
  parseJsonBody,
  requireOptionsObject,
  type ClientLogger,
  type HttpResponse,
} from "./http.js";
import { parseNdjson } from "./ndjson.js";
import { assembleResponse, toolsForRescue, toWireTools, type RawAssistantMessage } from "./openai-wire.js";
import { authHeaders, ollamaBody } from "./request-overrides.js";
import { trackedStream } from "./stream-retry.js";

export interface OllamaClientOptions {
  model: string;
  baseUrl?: string;
  temperature?: number;
  /** Headers wait and idle gap between body chunks; expiry → BackendError(408). */
  timeoutMs?: number;
  /** undefined: auto-detect from the model name, fall back if refused; true: require; false: never send, discard reasoning. */
  think?: boolean;
  /** Extra Ollama `options` (top_p, top_k, min_p, repeat_penalty, seed, ...), passed through. */
  options?: Record<string, unknown>;
  numCtx?: number;
  /**
   * Sent as `Authorization: Bearer <apiKey>` on every request (chat, /api/tags, /api/show,
   * forward()): Ollama itself checks none, a reverse proxy in front of it (nginx, Caddy, Open
   * WebUI) does. A per-request key (RequestOverrides.apiKey, forward()'s apiKey) replaces it.
   */
  apiKey?: string;
  /** Opt in to the model card's sampling values (src/models/sampling.ts); explicit fields still win. */
  recommendedSampling?: boolean;
  logger?: ClientLogger;
}

/** Families whose Ollama builds accept `think` (others answer 400 "does not support thinking"). */
const THINKING_MODEL = /qwen3|qwq|deepseek-r1|deepseek-v3\.1|magistral|gpt-oss|phi4-(mini-)?reasoning|cogito|granite3\.[23]|thinking/i;
const THINK_REFUSED = /does not support thinking/i;

/**
 * @example
 * const client = new OllamaClient({ model: "qwen3:8b", numCtx: 16_384 });
 * const response = await client.send([{ role: "user", content: "Weather in Paris?" }], [weather.spec]);
 */
export class OllamaClient implements LLMClient {
  readonly apiFormat = "ollama" as const;
  readonly model: string;
  readonly baseUrl: string;
  readonly think: boolean | undefined;
  lastUsage: Usage | undefined;
  /** RETRY re-requests made by sendStream (eval metric). */
  streamRetries = 0;
  private readonly temperature: number | undefined;
  private readonly timeoutMs: number;
  private readonly extraOptions: Record<string, unknown>;
  private readonly logger: ClientLogger;
  private numCtx: number | undefined;
  /** Whether requests carry `think: true`; auto mode may turn it off once. */
  private sendThink: boolean;
  private autoLogged = false;
  /** Trained context length per model (/api/show); a model's card does not change while it is pulled. */
  private readonly trainedContext = new Map<string, number | undefined>();
  /** The `authorization` header of apiKey; an ES private field, so neither inspect nor JSON.stringify shows the key. */
  readonly #auth: Record<string, string> | undefined;

  constructor(options: OllamaClientOptions) {
    const o = requireOptionsObject(options, "OllamaClient");
    this.model = checkString(o.model, "model", true)!;
    this.baseUrl = checkUrl(o.baseUrl ?? "http://localhost:11434", "baseUrl");
    this.timeoutMs = checkPositiveInt(o.timeoutMs, "timeoutMs") ?? 300_000;
    this.think = checkBoolean(o.think, "think");
    const apiKey = checkString(o.apiKey, "apiKey", false);
    this.#auth = apiKey === undefined ? undefined : { authorization: `Bearer ${apiKey}` };
    registerSecret(apiKey);
    const extra = { ...checkRecord(o.options, "options") };
    if ("num_ctx" in extra) throw new InvalidArgumentError("options.num_ctx", "use numCtx / setNumCtx() instead");
    this.numCtx = checkPositiveInt(o.numCtx, "numCtx");
    this.logger = checkLogger(o.logger);
    const sampling = clientSampling(this.model, {
      recommendedSampling: checkBoolean(o.recommendedSampling, "recommendedSampling") ?? false,
      temperature: checkNumber(o.temperature, "temperature", 0, 2),
      extra,
      logger: asForgeLogger(this.logger),
    });
    this.temperature = sampling.temperature;
    this.extraOptions = sampling.extra;
    this.sendThink = this.think ?? THINKING_MODEL.test(this.model);
  }

  /** Set the num_ctx override sent on every request (undefined: the server's default). */
  setNumCtx(numCtx: number | undefined): void {
    this.numCtx = checkPositiveInt(numCtx, "numCtx");
  }

  /** GET /api/tags: the models pulled into this Ollama. */
  async listModels(options: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    const url = joinUrl(this.baseUrl, "/api/tags");
    const res = await httpCall(url, { method: "GET", headers: this.#auth, timeoutMs: this.timeoutMs, signal: options.signal });
    const text = await res.text();
    const data = parseJsonBody(text, res.statusCode);
    if (!isPlainObject(data) || !Array.isArray(data.models)) throw new BackendError(res.statusCode, text, `${url} did not answer { models: [...] }`);
    return data.models.filter(isPlainObject).flatMap((m): ModelInfo[] => {
      const id = typeof m.name === "string" ? m.name : typeof m.model === "string" ? m.model : undefined;
      if (id === undefined) return [];
      const created = typeof m.modified_at === "string" ? Math.floor(Date.parse(m.modified_at) / 1000) : Number.NaN;
      return [Number.isFinite(created) ? { id, ownedBy: "ollama", created } : { id, ownedBy: "ollama" }];
    });
  }

  /**
   * One request to another of this Ollama's endpoints, as it is (the proxy's Ollama door passes
   * `/api/tags`, `/api/show`, `/api/generate`, `/api/embed` … through): the answer's status and
   * body stream. An answer of 4xx/5xx is a BackendError carrying Ollama's status and body.
   * `apiKey` (a proxy caller's forwarded key) replaces the client's own for this request.
   *
   * @example
   * const res = await client.forward("/api/version", { method: "GET" });
   */
  async forward(path: string, init: { method: "GET" | "POST"; json?: unknown; signal?: AbortSignal | undefined; apiKey?: string | undefined }): Promise<HttpResponse> {
    const headers = authHeaders(this.#auth, init.apiKey === undefined ? undefined : { apiKey: init.apiKey });
    return httpCall(joinUrl(this.baseUrl, path), { method: init.method, json: init.json, headers, timeoutMs: this.timeoutMs, signal: init.signal });
  }

  /**
   * The window every request gets: num_ctx when set. Undefined otherwise, because Ollama's own
   * default then applies (it depends on the server's OLLAMA_CONTEXT_LENGTH and VRAM, and no
   * endpoint reports it); the most a num_ctx may be is {@link modelContextLength}.
   */
  async getContextLength(): Promise<number | undefined> {
    return this.numCtx;
  }

  /**
   * The most context a model can take (default: the client's own model): POST /api/show
   * `model_info["<general.architecture>.context_length"]`, its trained maximum — the ceiling of a
   * num_ctx, not the window a request gets without one. Cached per model; undefined when the
   * model card does not say. A model Ollama does not have is its BackendError (404).
   *
   * @example
   * await client.modelContextLength({ model: "qwen3:8b" }); // 40960
   */
  async modelContextLength(options: ContextLengthOptions = {}): Promise<number | undefined> {
    const model = options.model ?? this.model;
    if (this.trainedContext.has(model)) return this.trainedContext.get(model);
    const url = joinUrl(this.baseUrl, "/api/show");
    const res = await httpCall(url, { method: "POST", json: { model }, headers: this.#auth, timeoutMs: this.timeoutMs, signal: options.signal });
    const text = await res.text();
    const length = trainedContextLength(parseJsonBody(text, res.statusCode), `${url} (model "${model}")`, text);
    this.trainedContext.set(model, length);
    return length;
  }

  async send(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): Promise<LLMResponse> {
    const res = await this.open(messages, tools, false, options);
    const data = parseJsonBody(await res.text(), res.statusCode);
    if (!isPlainObject(data) || !isPlainObject(data.message)) {
      throw new BackendError(res.statusCode, JSON.stringify(data), "Ollama answer has no message object");
    }
    const response = this.toResponse(rawMessage(data.message), tools, ollamaUsage(data));
    this.lastUsage = response.usage;
    return response;
  }

  sendStream(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): AsyncGenerator<StreamChunk> {
    return trackedStream(() => this.streamOnce(messages, tools, options), this);
  }

  private async *streamOnce(messages: WireMessage[], tools: ToolSpec[] | undefined, options: SendOptions): AsyncGenerator<StreamChunk> {
    const res = await this.open(messages, tools, true, options);
    const whole: RawAssistantMessage = { content: "", toolCalls: [] };
    let reasoning = "";
    for await (const line of parseNdjson(res.body)) {
      if (!isPlainObject(line)) throw new StreamError(`Malformed stream: line is not an object: ${JSON.stringify(line)}`);
      if (line.error !== undefined) throw new BackendError(500, JSON.stringify(line), `Ollama reported an error mid-stream: ${String(line.error)}`);
      const part = isPlainObject(line.message) ? rawMessage(line.message) : { content: "", toolCalls: [] };
      if (part.reasoning) {
        reasoning += part.reasoning;
        if (this.think !== false) yield { type: "text_delta", content: part.reasoning, channel: "reasoning" };
      }
      if (part.content) {
        whole.content += part.content;
        yield { type: "text_delta", content: part.content, channel: "content" };
      }
      for (const call of part.toolCalls) {
        const index = whole.toolCalls.push(call) - 1;
        yield { type: "tool_call_delta", content: JSON.stringify(call.arguments ?? null), index, name: call.name, ...(call.id ? { id: call.id } : {}) };
      }
      if (line.done === true) {
        whole.reasoning = reasoning || undefined;
        yield { type: "final", response: this.toResponse(whole, tools, ollamaUsage(line)) };
        return;
      }
    }
    throw new StreamError('Malformed stream: NDJSON ended without a "done": true line');
  }

  private toResponse(message: RawAssistantMessage, tools: ToolSpec[] | undefined, usage: Usage | undefined): LLMResponse {
    return assembleResponse(message, { ...toolsForRescue(tools), think: this.think, usage });
  }

  /** POST /api/chat; in auto think mode a "does not support thinking" refusal is answered once by dropping think. */
  private async open(messages: WireMessage[], tools: ToolSpec[] | undefined, stream: boolean, options: SendOptions): Promise<HttpResponse> {
    if (this.think === undefined && !this.autoLogged) {
      this.autoLogged = true;
      this.logger("info", `OllamaClient think auto-detect for "${this.model}": ${this.sendThink ? "sending think=true" : "not sending think"}`);
    }
    const url = joinUrl(this.baseUrl, "/api/chat");
    const headers = authHeaders(this.#auth, options.request);
    const post = () =>
      httpCall(url, { method: "POST", json: ollamaBody(this.body(messages, tools, stream), options.request), headers, timeoutMs: this.timeoutMs, signal: options.signal, traceContext: options.traceContext });
    try {
      return await post();
    } catch (error) {
      const refused = isBackendError(error) && error.statusCode === 400 && THINK_REFUSED.test(error.body) && this.sendThink;
      if (!refused) throw error;
      if (this.think === true) throw new ThinkingNotSupportedError(this.model, error.statusCode, error.body);
      this.sendThink = false;
      this.logger("warn", `Model "${this.model}" does not support thinking; continuing without think (auto-detect fallback)`);
      return await post();
    }
  }

  /** The exact /api/chat request body. */
  private body(messages: WireMessage[], tools: ToolSpec[] | undefined, stream: boolean): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.model, messages, stream };
    if (tools && tools.length > 0) body.tools = toWireTools(tools);
    if (this.sendThink) body.think = true;
    const options: Record<string, unknown> = { ...this.extraOptions };
    if (this.temperature !== undefined) options.temperature = this.temperature;
    if (this.numCtx !== undefined) options.num_ctx = this.numCtx;
    if (Object.keys(options).length > 0) body.options = options;
    return body;
  }
}

function rawMessage(message: Record<string, unknown>): RawAssistantMessage {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isPlainObject) : [];
  return {
    content: typeof message.content === "string" ? message.content : "",
    reasoning: typeof message.thinking === "string" ? message.thinking : undefined,
    toolCalls: calls.map((c) => {
      const fn = isPlainObject(c.function) ? c.function : {};
      return { name: String(fn.name ?? ""), arguments: fn.arguments, id: typeof c.id === "string" ? c.id : undefined };
    }),
  };
}

/** `<arch>.context_length` of an /api/show answer's model_info (the key `general.architecture` names). */
function trainedContextLength(data: unknown, where: string, text: string): number | undefined {
  const info = isPlainObject(data) ? data.model_info : undefined;
  if (!isPlainObject(info)) throw new ContextDiscoveryError(`${where} answered without a model_info object`, text.slice(0, 500));
  const arch = info["general.architecture"];
  const length = typeof arch === "string" ? info[`${arch}.context_length`] : undefined;
  if (length === undefined) return undefined;
  if (typeof length !== "number" || !Number.isInteger(length) || length <= 0) {
    throw new ContextDiscoveryError(`${where} reported ${String(arch)}.context_length ${JSON.stringify(length)}, not a positive integer`, text.slice(0, 500));
  }
  return length;
}

function ollamaUsage(data: Record<string, unknown>): Usage | undefined {
  const { prompt_eval_count: input, eval_count: output } = data;
  if (typeof input !== "number" || typeof output !== "number") return undefined;
  return { inputTokens: input, outputTokens: output };
}
