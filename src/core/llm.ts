/**
 * The contract between the loop and a backend adapter. The loop sees `LLMResponse` only,
 * never raw text or HTTP; adapters own wire formats, native vs prompt-injected calling and
 * stream assembly.
 */
import type { Context } from "@opentelemetry/api";
import type { ApiFormat, WireMessage } from "./wire-messages.js";
import type { ToolSpec } from "./tool.js";

/** A tool invocation as the model produced it. `args` stays `unknown` until validated. */
export interface ToolCall {
  tool: string;
  args: unknown;
  id?: string;
  reasoning?: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export type LLMResponse =
  | {
      type: "tool_calls";
      toolCalls: ToolCall[];
      /** Prose the model wrote beside the calls ("Let me check."), markup cut out. */
      content?: string;
      reasoning?: string;
      usage?: Usage;
      /** The calls were recovered from text by the client. */
      rescued?: true;
      /** The format family they were recovered from (`hermes`, `pythonic`, ...; as `extractToolCalls` names them). */
      rescueFormat?: string;
    }
  | { type: "text"; content: string; reasoning?: string; usage?: Usage };

export const ChunkType = {
  TEXT_DELTA: "text_delta",
  TOOL_CALL_DELTA: "tool_call_delta",
  FINAL: "final",
  RETRY: "retry",
} as const;
export type ChunkType = (typeof ChunkType)[keyof typeof ChunkType];

/**
 * One streaming chunk. Consumers render deltas; the loop acts on FINAL only. On RETRY the
 * previous attempt's partial output must be discarded.
 */
export type StreamChunk =
  | { type: "text_delta"; content: string; channel?: "content" | "reasoning" }
  | { type: "tool_call_delta"; content: string; index: number; name?: string; id?: string }
  | { type: "final"; response: LLMResponse }
  | { type: "retry"; reason: string };

/** OpenAI's tool_choice, the neutral form every client maps to its backend's own. */
export type ToolChoice = "none" | "auto" | "required" | { type: "function"; function: { name: string } };

/**
 * Settings one caller brings to one request (the proxy passes its callers' fields on this
 * way). They win over the client's configured defaults for that request only.
 */
export interface RequestOverrides {
  model?: string;
  /** Applied when tools are sent natively; Ollama and prompt-mode servers have no equivalent. */
  toolChoice?: ToolChoice;
  /**
   * Sampling and other fields in OpenAI chat-completions names (temperature, top_p, max_tokens,
   * stop, seed, response_format, ...). OpenAI-compatible backends get every field; Ollama and
   * Anthropic get the ones they have an equivalent for.
   */
  body?: Record<string, unknown>;
  /** The caller's own backend credential, replacing the client's (proxy `--forward-auth`). */
  apiKey?: string;
}

export interface SendOptions {
  signal?: AbortSignal;
  request?: RequestOverrides;
  /**
   * The OpenTelemetry context of this call (the runner's `chat` span): HTTP clients send it as
   * `traceparent` (the registered propagator's headers). Passed explicitly because users need
   * not register an async context manager.
   */
  traceContext?: Context;
}

/** One entry of a backend's model list. */
export interface ModelInfo {
  id: string;
  ownedBy?: string;
  /** Unix seconds. */
  created?: number;
}

export interface LLMClient {
  /** Wire format the runner serializes messages into. */
  readonly apiFormat: ApiFormat;
  send(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): Promise<LLMResponse>;
  sendStream?(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): AsyncIterable<StreamChunk>;
  /**
   * Context window in tokens that this client's requests get, when the backend reports one.
   * Multi-model servers answer for `options.model` (default: the client's own model).
   */
  getContextLength(options?: ContextLengthOptions): Promise<number | undefined>;
  /** The models the backend serves, when it can say. */
  listModels?(options?: { signal?: AbortSignal }): Promise<ModelInfo[]>;
  /**
   * Input tokens these messages and tools take in the model's context, by the backend's own
   * tokenizer (chat template included). Only clients whose backend has a tokenizer endpoint
   * implement it; callers fall back to an estimate when it is absent or fails.
   */
  countTokens?(messages: WireMessage[], tools?: ToolSpec[], options?: CountTokensOptions): Promise<number>;
}

export interface ContextLengthOptions {
  /** The window of this model instead of the client's own (multi-model servers). */
  model?: string;
  signal?: AbortSignal;
}

export interface CountTokensOptions {
  signal?: AbortSignal;
  /** Count for this model instead of the client's own (multi-model servers). */
  model?: string;
  /** The caller's own backend credential (proxy `forwardAuth`). */
  apiKey?: string;
}

export function textResponse(content: string, extra: { reasoning?: string; usage?: Usage } = {}): LLMResponse {
  return { type: "text", content, ...extra };
}

export function toolCallsResponse(toolCalls: ToolCall[], extra: { reasoning?: string; usage?: Usage } = {}): LLMResponse {
  return { type: "tool_calls", toolCalls, ...extra };
}
