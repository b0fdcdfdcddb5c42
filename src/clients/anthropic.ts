/**
 * Claude through the official SDK (seed 000 "AnthropicClient (Baseline)"). The runner
 * serializes OpenAI-format messages (`apiFormat = "openai"`); this client converts them,
 * calls the Messages API and maps the answer back to an LLMResponse. The SDK never retries
 * (`maxRetries: 0`): retries belong to the loop.
 */
import { registerSecret } from "../core/redact.js";
import { propagation } from "@opentelemetry/api";
import type Anthropic from "@anthropic-ai/sdk";
import { BackendError, InvalidArgumentError, StreamError } from "../core/errors.js";
import { optionalPackages } from "../core/optional-package.js";
import type { CountTokensOptions, LLMClient, LLMResponse, ModelInfo, RequestOverrides, SendOptions, StreamChunk, ToolCall, Usage } from "../core/llm.js";
import type { WireMessage } from "../core/wire-messages.js";
import type { ToolSpec } from "../core/tool.js";
import {
  toAnthropicMessages,
  toAnthropicToolChoice,
  toAnthropicTools,
  type AnthropicToolChoice,
} from "./anthropic-convert.js";
import { anthropicParams } from "./request-overrides.js";
import { trackedStream } from "./stream-retry.js";
import { decodeToolArguments } from "./tool-args.js";

type AnthropicSdk = typeof Anthropic;
// The SDK is about 250 modules (and an optional peer, not in the core install): loaded on a
// client's first request, so every CLI command and library user that never talks to Claude starts
// (and installs) without it; without it that request fails with one line naming it.
let sdkLoading: Promise<AnthropicSdk> | undefined;
/** Set once loaded: an SDK error can only exist after that, so mapSdkError reads it synchronously. */
let loadedSdk: AnthropicSdk | undefined;
function loadSdk(): Promise<AnthropicSdk> {
  return (sdkLoading ??= optionalPackages("AnthropicClient", ["@anthropic-ai/sdk"], () => import("@anthropic-ai/sdk")).then((m) => (loadedSdk = m.default)));
}

export interface AnthropicClientOptions {
  model: string;
  /** Defaults to the SDK's own lookup (ANTHROPIC_API_KEY). */
  apiKey?: string;
  baseURL?: string;
  temperature?: number;
  maxTokens?: number;
  /** Whole-request timeout; expiry → BackendError(408). */
  timeoutMs?: number;
  toolChoice?: AnthropicToolChoice;
  /** Extended thinking; thinking blocks come back as `reasoning`. */
  thinking?: { budgetTokens: number };
}

type ThinkingBlock = Anthropic.ThinkingBlockParam | Anthropic.RedactedThinkingBlockParam;
type ResponseBlock = Anthropic.ContentBlock;
/** SDK 1.x dropped `temperature` from its types; the Messages API still takes it in the body. */
type RequestParams = Anthropic.MessageCreateParamsNonStreaming & { temperature?: number };

const CONTEXT_LENGTH = 200_000;

/**
 * @example
 * const client = new AnthropicClient({ model: "claude-haiku-4-5-20251001", toolChoice: "any" });
 * const response = await client.send([{ role: "user", content: "Weather in Paris?" }], [weather.spec]);
 * client.lastUsage; // { inputTokens, outputTokens }
 */
export class AnthropicClient implements LLMClient {
  readonly apiFormat = "openai" as const;
  readonly model: string;
  lastUsage: Usage | undefined;
  /** RETRY re-requests made by sendStream (eval metric). */
  streamRetries = 0;
  private readonly sdkOptions: ConstructorParameters<AnthropicSdk>[0];
  private sdkClient: Promise<Anthropic> | undefined;
  private readonly temperature: number | undefined;
  private readonly maxTokens: number;
  private readonly toolChoice: AnthropicToolChoice | undefined;
  private readonly thinking: { budgetTokens: number } | undefined;
  /** Signed thinking blocks per tool_use id, replayed before that tool_use (required with thinking on). */
  private readonly thinkingByToolUse = new Map<string, ThinkingBlock[]>();

  constructor(options: AnthropicClientOptions) {
    if (!options || typeof options !== "object") throw new InvalidArgumentError("options", "AnthropicClient needs { model, ... }");
    const { model, apiKey, baseURL, temperature, maxTokens = 4096, timeoutMs = 300_000, toolChoice, thinking } = options;
    if (typeof model !== "string" || model.length === 0) throw new InvalidArgumentError("model", 'a Claude model id, e.g. "claude-haiku-4-5-20251001"');
    if (temperature !== undefined && !(typeof temperature === "number" && temperature >= 0 && temperature <= 1)) {
      throw new InvalidArgumentError("temperature", `Anthropic accepts 0..1, got ${String(temperature)}`);
    }
    if (!Number.isInteger(maxTokens) || maxTokens <= 0) throw new InvalidArgumentError("maxTokens", "must be a positive integer");
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new InvalidArgumentError("timeoutMs", "must be a positive integer of milliseconds");
    if (
      toolChoice !== undefined &&
      toolChoice !== "auto" &&
      toolChoice !== "any" &&
      !(typeof toolChoice === "object" && toolChoice?.type === "tool" && typeof toolChoice.name === "string")
    ) {
      throw new InvalidArgumentError("toolChoice", 'use "auto", "any" or { type: "tool", name }');
    }
    if (thinking !== undefined) {
      if (!Number.isInteger(thinking?.budgetTokens) || thinking.budgetTokens < 1024 || thinking.budgetTokens >= maxTokens) {
        throw new InvalidArgumentError("thinking.budgetTokens", `must be an integer ≥ 1024 and below maxTokens (${maxTokens})`);
      }
      if (toolChoice !== undefined && toolChoice !== "auto") {
        throw new InvalidArgumentError("toolChoice", 'Anthropic allows only "auto" together with extended thinking');
      }
    }
    this.model = model;
    this.temperature = temperature;
    this.maxTokens = maxTokens;
    this.toolChoice = toolChoice;
    this.thinking = thinking;
    this.sdkOptions = { apiKey, baseURL, maxRetries: 0, timeout: timeoutMs, logLevel: "off" };
    registerSecret(apiKey);
  }

  private sdk(): Promise<Anthropic> {
    return (this.sdkClient ??= loadSdk().then((Sdk) => new Sdk(this.sdkOptions)));
  }

  /** Claude models have a 200K window. */
  async getContextLength(): Promise<number> {
    return CONTEXT_LENGTH;
  }

  async send(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): Promise<LLMResponse> {
    options.signal?.throwIfAborted();
    let message: Anthropic.Message;
    try {
      message = await (await this.sdk()).messages.create(this.params(messages, tools, options.request), requestOptions(options));
    } catch (error) {
      throw mapSdkError(error, options.signal);
    }
    const response = this.toResponse(message.content, usageOf(message.usage));
    this.lastUsage = response.usage;
    return response;
  }

  sendStream(messages: WireMessage[], tools?: ToolSpec[], options: SendOptions = {}): AsyncGenerator<StreamChunk> {
    return trackedStream(() => this.streamOnce(messages, tools, options), this);
  }

  /** The Models API list (every page). */
  async listModels(options: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    const models: ModelInfo[] = [];
    try {
      for await (const m of (await this.sdk()).models.list({}, { signal: options.signal })) {
        const created = Math.floor(Date.parse(m.created_at) / 1000);
        models.push(Number.isFinite(created) ? { id: m.id, ownedBy: "anthropic", created } : { id: m.id, ownedBy: "anthropic" });
      }
    } catch (error) {
      throw mapSdkError(error, options.signal);
    }
    return models;
  }

  /**
   * The Messages API's own count (POST /v1/messages/count_tokens) for the request `send` would
   * make: system, messages, tools and the thinking setting.
   *
   * @example
   * await client.countTokens([{ role: "user", content: "Weather in Paris?" }], [weather.spec]); // e.g. 412
   */
  async countTokens(messages: WireMessage[], tools?: ToolSpec[], options: CountTokensOptions = {}): Promise<number> {
    options.signal?.throwIfAborted();
    const { max_tokens: _max, temperature: _t, ...params } = this.params(messages, tools, options.model === undefined ? undefined : { model: options.model });
    const request = options.apiKey === undefined ? { signal: options.signal } : { signal: options.signal, request: { apiKey: options.apiKey } };
    try {
      const { input_tokens } = await (await this.sdk()).messages.countTokens(params, requestOptions(request));
      return input_tokens;
    } catch (error) {
      throw mapSdkError(error, options.signal);
    }
  }

  private params(messages: WireMessage[], tools: ToolSpec[] | undefined, request: RequestOverrides | undefined): RequestParams {
    const { system, messages: converted } = toAnthropicMessages(messages, { thinkingFor: (id) => this.thinkingByToolUse.get(id) });
    const params: RequestParams = { model: this.model, max_tokens: this.maxTokens, messages: converted };
    if (system !== undefined) params.system = system;
    if (this.temperature !== undefined) params.temperature = this.temperature;
    if (this.thinking) params.thinking = { type: "enabled", budget_tokens: this.thinking.budgetTokens };
    if (tools && tools.length > 0) {
      params.tools = toAnthropicTools(tools);
      if (this.toolChoice !== undefined) params.tool_choice = toAnthropicToolChoice(this.toolChoice);
    }
    return anthropicParams(params, request);
  }

  private async *streamOnce(messages: WireMessage[], tools: ToolSpec[] | undefined, options: SendOptions): AsyncGenerator<StreamChunk> {
    const { signal } = options;
    signal?.throwIfAborted();
    let stream: AsyncIterable<Anthropic.RawMessageStreamEvent>;
    try {
      stream = await (await this.sdk()).messages.create({ ...this.params(messages, tools, options.request), stream: true }, requestOptions(options));
    } catch (error) {
      throw mapSdkError(error, signal);
    }
    const blocks: ResponseBlock[] = [];
    const partialJson = new Map<number, string>();
    const toolIndex = new Map<number, number>();
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    let stopped = false;
    try {
      for await (const event of stream) {
        switch (event.type) {
          case "message_start":
            usage = usageOf(event.message.usage);
            break;
          case "content_block_start": {
            blocks[event.index] = structuredClone(event.content_block);
            if (event.content_block.type === "tool_use") {
              const ordinal = toolIndex.size;
              toolIndex.set(event.index, ordinal);
              partialJson.set(event.index, "");
              yield { type: "tool_call_delta", content: "", index: ordinal, name: event.content_block.name, id: event.content_block.id };
            }
            break;
          }
          case "content_block_delta": {
            const block = blocks[event.index];
            if (!block) throw new StreamError(`content_block_delta for block ${event.index} before its content_block_start`);
            const delta = event.delta;
            if (delta.type === "text_delta" && block.type === "text") {
              block.text += delta.text;
              yield { type: "text_delta", content: delta.text };
            } else if (delta.type === "input_json_delta" && block.type === "tool_use") {
              partialJson.set(event.index, partialJson.get(event.index)! + delta.partial_json);
              yield { type: "tool_call_delta", content: delta.partial_json, index: toolIndex.get(event.index)! };
            } else if (delta.type === "thinking_delta" && block.type === "thinking") {
              block.thinking += delta.thinking;
              yield { type: "text_delta", content: delta.thinking, channel: "reasoning" };
            } else if (delta.type === "signature_delta" && block.type === "thinking") {
              block.signature += delta.signature;
            } else if (delta.type !== "citations_delta") {
              throw new StreamError(`Delta "${delta.type}" does not fit block ${event.index} of type "${block.type}"`);
            }
            break;
          }
          case "content_block_stop": {
            const block = blocks[event.index];
            if (block?.type === "tool_use") {
              const raw = partialJson.get(event.index)!;
              const input = decodeToolArguments(raw === "" ? "{}" : raw);
              if (typeof input === "string") throw new StreamError(`tool_use input for "${block.name}" is not valid JSON: ${raw.slice(0, 200)}`);
              block.input = input;
            }
            break;
          }
          case "message_delta":
            // message_delta usage is cumulative for the whole message.
            usage = {
              inputTokens: usage.inputTokens,
              outputTokens: event.usage.output_tokens ?? usage.outputTokens,
            };
            break;
          case "message_stop":
            stopped = true;
            break;
        }
      }
    } catch (error) {
      throw mapSdkError(error, signal, true);
    }
    // The SDK ends an aborted stream quietly; that is a cancellation, not a truncated stream.
    signal?.throwIfAborted();
    if (!stopped) throw new StreamError("Anthropic stream ended without message_stop");
    yield { type: "final", response: this.toResponse(blocks.filter(Boolean), usage) };
  }

  private toResponse(content: readonly ResponseBlock[], usage: Usage): LLMResponse {
    const texts: string[] = [];
    const thoughts: string[] = [];
    const thinkingBlocks: ThinkingBlock[] = [];
    const calls: ToolCall[] = [];
    for (const block of content) {
      if (block.type === "text") texts.push(block.text);
      else if (block.type === "thinking") {
        thoughts.push(block.thinking);
        thinkingBlocks.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
      } else if (block.type === "redacted_thinking") thinkingBlocks.push({ type: "redacted_thinking", data: block.data });
      else if (block.type === "tool_use") calls.push({ tool: block.name, args: block.input, id: block.id });
    }
    const text = texts.join("");
    const thinking = thoughts.join("\n");
    if (calls.length > 0) {
      if (thinkingBlocks.length > 0) this.thinkingByToolUse.set(calls[0]!.id!, thinkingBlocks);
      // Text written beside tool_use is the model's visible rationale: kept as reasoning.
      const reasoning = [thinking, text].filter((s) => s.length > 0).join("\n\n");
      return reasoning ? { type: "tool_calls", toolCalls: calls, reasoning, usage } : { type: "tool_calls", toolCalls: calls, usage };
    }
    return thinking ? { type: "text", content: text, reasoning: thinking, usage } : { type: "text", content: text, usage };
  }
}

/** Per-request SDK options: the signal, trace-context headers, and a caller's own key when the proxy forwards it. */
function requestOptions(options: SendOptions): Anthropic.RequestOptions {
  const apiKey = options.request?.apiKey;
  const extra: Record<string, string> = {};
  if (options.traceContext) propagation.inject(options.traceContext, extra);
  if (apiKey === undefined) return Object.keys(extra).length === 0 ? { signal: options.signal } : { signal: options.signal, headers: extra };
  return { signal: options.signal, headers: { ...extra, "x-api-key": apiKey, authorization: null } };
}

function usageOf(usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null }): Usage {
  return {
    inputTokens: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
    outputTokens: usage.output_tokens,
  };
}

/**
 * SDK errors → forge errors: HTTP answers → BackendError(status, body); timeouts → 408; no
 * answer → BackendError(0); aborts → the signal's reason. Inside a stream, a transport or
 * parse failure means the stream is malformed (StreamError, re-requested once).
 */
function mapSdkError(error: unknown, signal: AbortSignal | undefined, midStream = false): unknown {
  if (signal?.aborted) return signal.reason;
  if (error instanceof StreamError || error instanceof BackendError) return error;
  const Anthropic = loadedSdk;
  if (Anthropic === undefined) return error;
  if (error instanceof Anthropic.APIUserAbortError) return new DOMException("The operation was aborted", "AbortError");
  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return new BackendError(408, "", `Anthropic request timed out: ${error.message}`, { cause: error });
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return midStream
      ? new StreamError(`Anthropic stream broke off: ${describeCause(error)}`, { cause: error })
      : new BackendError(0, "", `No usable HTTP answer from Anthropic: ${describeCause(error)}`, { cause: error });
  }
  if (error instanceof Anthropic.APIError) {
    const body = typeof error.error === "object" && error.error !== null ? JSON.stringify(error.error) : String(error.error ?? error.message);
    // An `error` event inside a stream has no HTTP status; Anthropic's overloaded_error is 529.
    const status = error.status ?? (body.includes("overloaded_error") ? 529 : 500);
    return new BackendError(status, body, undefined, { cause: error });
  }
  if (error instanceof Error && error.message.startsWith("Could not resolve authentication method")) {
    return new InvalidArgumentError("apiKey", `no Anthropic credential found (pass apiKey or set ANTHROPIC_API_KEY): ${error.message}`);
  }
  if (midStream) return new StreamError(`Malformed Anthropic stream: ${describeCause(error)}`, { cause: error });
  return error;
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const base = error instanceof Error ? error.message : String(error);
  return cause instanceof Error ? `${base} (${cause.message})` : base;
}
