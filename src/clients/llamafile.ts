/**
 * llama-server and llamafile over their OpenAI-compatible /v1/chat/completions. Three modes:
 * "native" (the `tools` parameter; needs a --jinja server), "prompt" (tool prompt injected,
 * calls extracted from text) and "auto" (native first; when the very first request is refused
 * with an HTTP error that means "no native tools" (see rejectsNativeTools), prompt from then
 * on — logged and visible as `resolvedMode`).
 */
import { registerSecret } from "../core/redact.js";
import { BackendError, ContextDiscoveryError, InvalidArgumentError } from "../core/errors.js";
import type { ContextLengthOptions, CountTokensOptions, LLMClient, LLMResponse, ModelInfo, RequestOverrides, SendOptions, StreamChunk, Usage } from "../core/llm.js";
import type { OpenAIWireMessage, WireMessage } from "../core/wire-messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";
import { rescueToolCall } from "../parsing/index.js";
import { clientSampling } from "../models/sampling.js";
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
  postJson,
  requireOptionsObject,
  type ClientLogger,
} from "./http.js";
import { toPromptModeMessages } from "./llamafile-prompt.js";
import { listOpenAIModels, sendChatCompletion, streamChatCompletion, toolsForRescue, toWireTools, type ChatCallContext } from "./openai-wire.js";
import { authHeaders, openAIBody } from "./request-overrides.js";
import { trackedStream } from "./stream-retry.js";

export type LlamafileMode = "native" | "prompt" | "auto";

export interface LlamafileClientOptions {
  /** Canonical identity; `model` becomes the file's stem. Give this or `model`. */
  ggufPath?: string;
  model?: string;
  baseUrl?: string;
  /** undefined: the server's default applies. */
  temperature?: number;
  mode?: LlamafileMode;
  timeoutMs?: number;
  /** false discards reasoning (reasoning_content and think tags); undefined/true capture it. */
  think?: boolean;
  /** llama-server prompt caching (`cache_prompt`). */
  cachePrompt?: boolean;
  /**
   * Sent as `Authorization: Bearer <apiKey>` on every request (chat, /models, /props, /tokenize,
   * /apply-template): a server started with `--api-key` answers 401 without it. A per-request
   * key (RequestOverrides.apiKey, countTokens' apiKey) replaces it.
   */
  apiKey?: string;
  /** Pin requests to one server slot (`id_slot`). */
  slotId?: number;
  /** Sampling fields sent as-is at the top level (top_p, top_k, min_p, repeat_penalty, ...). */
  sampling?: Record<string, unknown>;
  /** Opt in to the model card's sampling values (src/models/sampling.ts); explicit fields still win. */
  recommendedSampling?: boolean;
  logger?: ClientLogger;
}

const MODES: readonly LlamafileMode[] = ["native", "prompt", "auto"];
const RESERVED = new Set(["model", "messages", "stream", "tools", "cache_prompt", "id_slot"]);

/**
 * @example
 * const client = new LlamafileClient({ ggufPath: "/models/Ministral-8B-Q4_K_M.gguf", mode: "auto" });
 * const response = await client.send(serialized, [weather.spec]);
 * client.resolvedMode; // "native" or "prompt" after the first request
 */
export class LlamafileClient implements LLMClient {
  readonly apiFormat = "openai" as const;
  readonly model: string;
  readonly ggufPath: string | undefined;
  readonly baseUrl: string;
  readonly mode: LlamafileMode;
  readonly think: boolean | undefined;
  lastUsage: Usage | undefined;
  streamRetries = 0;
  private readonly temperature: number | undefined;
  private readonly timeoutMs: number;
  private readonly cachePrompt: boolean;
  private readonly slotId: number | undefined;
  private readonly sampling: Record<string, unknown>;
  private readonly logger: ClientLogger;
  private resolved: "native" | "prompt" | undefined;
  /** The `authorization` header of apiKey; an ES private field, so neither inspect nor JSON.stringify shows the key. */
  readonly #auth: Record<string, string> | undefined;

  constructor(options: LlamafileClientOptions) {
    const o = requireOptionsObject(options, "LlamafileClient");
    this.ggufPath = checkString(o.ggufPath, "ggufPath", false);
    const model = checkString(o.model, "model", false);
    if (this.ggufPath === undefined && model === undefined) throw new InvalidArgumentError("ggufPath", "give ggufPath (or model)");
    this.model = model ?? ggufStem(this.ggufPath!);
    this.baseUrl = checkUrl(o.baseUrl ?? "http://localhost:8080/v1", "baseUrl");
    const mode = o.mode ?? "auto";
    if (!MODES.includes(mode as LlamafileMode)) throw new InvalidArgumentError("mode", `must be one of ${MODES.join(", ")}, got ${JSON.stringify(mode)}`);
    this.mode = mode as LlamafileMode;
    this.timeoutMs = checkPositiveInt(o.timeoutMs, "timeoutMs") ?? 300_000;
    this.think = checkBoolean(o.think, "think");
    this.cachePrompt = checkBoolean(o.cachePrompt, "cachePrompt") ?? true;
    const apiKey = checkString(o.apiKey, "apiKey", false);
    this.#auth = apiKey === undefined ? undefined : { authorization: `Bearer ${apiKey}` };
    registerSecret(apiKey);
    const slot = o.slotId;
    if (slot !== undefined && (typeof slot !== "number" || !Number.isInteger(slot) || slot < 0)) {
      throw new InvalidArgumentError("slotId", `must be a non-negative integer, got ${JSON.stringify(slot)}`);
    }
    this.slotId = slot;
    const explicit = { ...checkRecord(o.sampling, "sampling") };
    for (const key of Object.keys(explicit)) {
      if (RESERVED.has(key)) throw new InvalidArgumentError(`sampling.${key}`, "is set by the client itself; use the matching option");
    }
    this.logger = checkLogger(o.logger);
    const sampling = clientSampling(this.ggufPath ?? this.model, {
      recommendedSampling: checkBoolean(o.recommendedSampling, "recommendedSampling") ?? false,
      temperature: checkNumber(o.temperature, "temperature", 0, 2),
      extra: explicit,
      logger: asForgeLogger(this.logger),
    });
    this.temperature = sampling.temperature;
    this.sampling = sampling.extra;
    this.resolved = this.mode === "auto" ? undefined : this.mode;
  }

  /** The mode in use: fixed modes at once, auto after its first request settles. */
  get resolvedMode(): "native" | "prompt" | undefined {
    return this.resolved;
  }

  async send(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): Promise<LLMResponse> {
    const run = async (mode: "native" | "prompt") => {
      try {
        return await sendChatCompletion(this.body(mode, messages, tools, false, options.request), this.context(tools, options));
      } catch (error) {
        const rescued = rescueFromServerError(error, tools);
        if (rescued) return rescued;
        throw error;
      }
    };
    const response = await this.withModeResolution(run);
    this.lastUsage = response.usage;
    return response;
  }

  sendStream(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): AsyncGenerator<StreamChunk> {
    return trackedStream(() => this.streamOnce(messages, tools, options), this);
  }

  /** Context window from llama-server's /props (`default_generation_settings.n_ctx`); undefined on 404. */
  async getContextLength(options: ContextLengthOptions = {}): Promise<number | undefined> {
    const url = joinUrl(this.baseUrl.replace(/\/v1$/, ""), "/props");
    let text: string;
    try {
      text = await (await httpCall(url, { method: "GET", headers: this.#auth, timeoutMs: this.timeoutMs, signal: options.signal })).text();
    } catch (error) {
      if (isBackendError(error) && error.statusCode === 404) return undefined;
      throw error;
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (cause) {
      throw new ContextDiscoveryError(`${url} did not answer JSON`, text, { cause });
    }
    const settings = isPlainObject(data) ? data.default_generation_settings : undefined;
    const nCtx = isPlainObject(settings) && settings.n_ctx !== undefined ? settings.n_ctx : isPlainObject(data) ? data.n_ctx : undefined;
    if (nCtx === undefined) return undefined;
    if (typeof nCtx !== "number" || !Number.isInteger(nCtx) || nCtx <= 0) {
      throw new ContextDiscoveryError(`${url} reported n_ctx ${JSON.stringify(nCtx)}, not a positive integer`, text);
    }
    return nCtx;
  }

  /**
   * Prompt tokens by the server's own chat template and tokenizer: POST /apply-template with
   * the body a chat request would carry (tools natively, or the tool prompt in prompt mode),
   * then POST /tokenize on the prompt (`add_special`, as the server itself tokenizes a chat
   * prompt; `model` rides along for llama-server's router mode). Servers without these
   * endpoints (llamafile) reject with their BackendError (404).
   *
   * @example
   * await client.countTokens([{ role: "user", content: "Weather in Paris?" }], [weather.spec]); // e.g. 187
   */
  async countTokens(messages: WireMessage[], tools?: ToolSpec[], options: CountTokensOptions = {}): Promise<number> {
    const call = {
      headers: authHeaders(this.#auth, options.apiKey === undefined ? undefined : { apiKey: options.apiKey }),
      timeoutMs: this.timeoutMs,
      signal: options.signal,
    };
    const root = this.baseUrl.replace(/\/v1$/, "");
    const count = async (mode: "native" | "prompt") => {
      const body = this.body(mode, messages, tools, false, options.model === undefined ? undefined : { model: options.model });
      const templated = await postJson(joinUrl(root, "/apply-template"), body, call);
      const prompt = isPlainObject(templated) ? templated.prompt : undefined;
      if (typeof prompt !== "string") throw new BackendError(200, JSON.stringify(templated).slice(0, 500), `${root}/apply-template answered without a "prompt" string`);
      const tokenized = await postJson(joinUrl(root, "/tokenize"), { model: body.model, content: prompt, add_special: true, parse_special: true }, call);
      const tokens = isPlainObject(tokenized) ? tokenized.tokens : undefined;
      if (!Array.isArray(tokens)) throw new BackendError(200, JSON.stringify(tokenized).slice(0, 500), `${root}/tokenize answered without a "tokens" list`);
      return tokens.length;
    };
    if (this.resolved !== undefined) return count(this.resolved);
    // Auto mode before its first chat request: count as native, as prompt mode when the server
    // refuses native tools. Counting does not settle the mode; the first chat request does.
    try {
      return await count("native");
    } catch (error) {
      if (!tools?.length || !rejectsNativeTools(error)) throw error;
      return count("prompt");
    }
  }

  /** One streamed attempt; in unresolved auto mode an HTTP error before the first event falls back. */
  private async *streamOnce(messages: WireMessage[], tools: ToolSpec[] | undefined, options: SendOptions): AsyncGenerator<StreamChunk> {
    const open = async (mode: "native" | "prompt") => {
      const it = streamChatCompletion(this.body(mode, messages, tools, true, options.request), this.context(tools, options));
      try {
        return { first: await it.next(), it };
      } catch (error) {
        const rescued = rescueFromServerError(error, tools);
        if (!rescued) throw error;
        return { first: { done: false, value: { type: "final", response: rescued } } as IteratorResult<StreamChunk>, it: undefined };
      }
    };
    const { first, it } = await this.withModeResolution(open);
    try {
      if (first.done) return;
      yield first.value;
      if (it) yield* it;
    } finally {
      // A consumer that stops right after the first chunk never entered `yield*`, which would
      // otherwise close the inner stream (and its socket) for us.
      await it?.return(undefined);
    }
  }

  /** Run with the active mode; the first auto request falls back to prompt once on an HTTP error. */
  private async withModeResolution<T>(run: (mode: "native" | "prompt") => Promise<T>): Promise<T> {
    if (this.resolved !== undefined) return run(this.resolved);
    try {
      const result = await run("native");
      if (this.resolved === undefined) {
        this.resolved = "native";
        this.logger("info", `LlamafileClient auto mode for "${this.model}": native function calling works, using native`);
      }
      return result;
    } catch (error) {
      if (!rejectsNativeTools(error)) throw error;
      this.resolved = "prompt";
      this.logger(
        "warn",
        `LlamafileClient auto mode for "${this.model}": native request failed with HTTP ${error.statusCode}; ` +
          `falling back to prompt-injected tool calling (${error.body.slice(0, 200)})`,
      );
      return run("prompt");
    }
  }

  /** GET {baseUrl}/models (llama-server and llamafile both serve it). */
  async listModels(options: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    return listOpenAIModels(joinUrl(this.baseUrl, "/models"), { headers: this.#auth, timeoutMs: this.timeoutMs, signal: options.signal });
  }

  private context(tools: ToolSpec[] | undefined, options: SendOptions): ChatCallContext {
    return {
      url: joinUrl(this.baseUrl, "/chat/completions"),
      headers: authHeaders(this.#auth, options.request),
      timeoutMs: this.timeoutMs,
      signal: options.signal,
      traceContext: options.traceContext,
      ...toolsForRescue(tools),
      think: this.think,
    };
  }

  private body(mode: "native" | "prompt", messages: WireMessage[], tools: ToolSpec[] | undefined, stream: boolean, request: RequestOverrides | undefined): Record<string, unknown> {
    const wire = messages as OpenAIWireMessage[];
    const body: Record<string, unknown> = { model: this.model, messages: mode === "prompt" ? toPromptModeMessages(wire, tools) : wire, stream };
    if (mode === "native" && tools && tools.length > 0) body.tools = toWireTools(tools);
    if (this.temperature !== undefined) body.temperature = this.temperature;
    Object.assign(body, this.sampling);
    body.cache_prompt = this.cachePrompt;
    if (this.slotId !== undefined) body.id_slot = this.slotId;
    return openAIBody(body, request);
  }
}

/**
 * The HTTP errors that mean "this server cannot do native tool calling": the request was
 * rejected (400/422, e.g. an old llamafile) or the server failed on it (500/501, e.g.
 * llama-server without --jinja: "tools param requires --jinja flag"). Not a reason: no answer,
 * timeouts, auth/URL mistakes, busy or still-loading servers (429/503), and a prompt that
 * exceeds the context — switching to prompt mode for good would hide those.
 */
function rejectsNativeTools(error: unknown): error is BackendError {
  if (!isBackendError(error) || ![400, 422, 500, 501].includes(error.statusCode)) return false;
  return !/exceed_context_size|exceeds the available context/i.test(error.body);
}

/** "/models/Foo-Q4_K_M.gguf" → "Foo-Q4_K_M". */
export function ggufStem(path: string): string {
  const base = path.split(/[\\/]/).pop() ?? path;
  return base.replace(/\.gguf$/i, "") || base;
}

/**
 * llama-server answers 500 when its own tool-call parser chokes on the model's output, with
 * that output in the error message; a call we can recognise there is still the model's call.
 */
function rescueFromServerError(error: unknown, tools: ToolSpec[] | undefined): LLMResponse | undefined {
  if (!isBackendError(error) || error.statusCode !== 500 || !tools?.length) return undefined;
  let text = error.body;
  try {
    const parsed: unknown = JSON.parse(error.body);
    const inner = isPlainObject(parsed) ? parsed.error : undefined;
    if (isPlainObject(inner) && typeof inner.message === "string") text = inner.message;
    else if (typeof inner === "string") text = inner;
  } catch {
    // Not JSON: the raw body is the text to search.
  }
  const { availableTools, schemas } = toolsForRescue(tools);
  const calls = rescueToolCall(text, availableTools, schemas);
  return calls.length > 0 ? { type: "tool_calls", toolCalls: calls } : undefined;
}
