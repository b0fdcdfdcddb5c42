/**
 * One answer of the wrapped model (a doGenerate result, or a doStream read to its end) as the
 * LLMResponse the proxy-request machine judges, plus what the machine has no field for and the
 * caller still gets back from the accepted attempt: warnings, response metadata, provider
 * metadata, per-call provider fields, and content parts that are neither text nor calls.
 */
import type {
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4ResponseMetadata,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4ToolCall,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
  SharedV4Warning,
} from "@ai-sdk/provider";
import { decodeToolArguments } from "../clients/tool-args.js";
import { StreamError } from "../core/errors.js";
import type { LLMResponse, ToolCall } from "../core/llm.js";

export interface ModelAttempt {
  /** What the machine judges. */
  llm: LLMResponse;
  usage: LanguageModelV4Usage;
  finishReason: LanguageModelV4FinishReason;
  providerMetadata?: SharedV4ProviderMetadata | undefined;
  /** The generate result's request and response records (doGenerate only). */
  records?: Pick<LanguageModelV4GenerateResult, "request" | "response"> | undefined;
  /** The stream result's request and response records (doStream only). */
  streamRecords?: Pick<LanguageModelV4StreamResult, "request" | "response"> | undefined;
  /** Stream metadata (doStream only). */
  streamMetadata?: LanguageModelV4ResponseMetadata | undefined;
  warnings: SharedV4Warning[];
  /** The model's own call parts by id: provider fields ride back on the accepted calls. */
  calls: Map<string, LanguageModelV4ToolCall>;
  /** Files, sources, provider tool results, ...: passed to the caller unchanged. */
  extras: LanguageModelV4Content[];
}

/** Text, reasoning and calls in the order the model wrote them, as one LLMResponse. */
function responseOf(text: string, reasoning: string, calls: LanguageModelV4ToolCall[], usage: LanguageModelV4Usage): LLMResponse {
  const extra = {
    ...(reasoning !== "" ? { reasoning } : {}),
    usage: { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 },
  };
  if (calls.length === 0) return { type: "text", content: text, ...extra };
  const toolCalls: ToolCall[] = calls.map((c) => ({ tool: c.toolName, args: decodeToolArguments(c.input), id: c.toolCallId }));
  return { type: "tool_calls", toolCalls, ...(text !== "" ? { content: text } : {}), ...extra };
}

/**
 * @example
 * generatedAttempt(await model.doGenerate(params)).response; // { type: "text", content: "..." }
 */
export function generatedAttempt(result: LanguageModelV4GenerateResult): ModelAttempt {
  let text = "";
  let reasoning = "";
  const calls: LanguageModelV4ToolCall[] = [];
  const extras: LanguageModelV4Content[] = [];
  for (const part of result.content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool-call") calls.push(part);
    else extras.push(part);
  }
  return {
    llm: responseOf(text, reasoning, calls, result.usage),
    usage: result.usage,
    finishReason: result.finishReason,
    providerMetadata: result.providerMetadata,
    records: { request: result.request, response: result.response },
    warnings: result.warnings,
    calls: new Map(calls.map((c) => [c.toolCallId, c])),
    extras,
  };
}

/** Where a streamed attempt's text goes as it arrives (forgeGuardrails' live release). */
export interface AttemptSink {
  warnings(warnings: SharedV4Warning[]): void;
  metadata(metadata: LanguageModelV4ResponseMetadata): void;
  delta(channel: "content" | "reasoning", text: string): void;
}

/**
 * A model stream read to its end. An `error` part fails the attempt with that error (as the
 * AI SDK would surface it); a stream without `finish` is a StreamError. With a `sink`, text and
 * reasoning deltas are handed over as they arrive too.
 *
 * @example
 * const attempt = await streamedAttempt(await model.doStream(params));
 */
export async function streamedAttempt(result: LanguageModelV4StreamResult, sink?: AttemptSink): Promise<ModelAttempt> {
  let text = "";
  let reasoning = "";
  const calls: LanguageModelV4ToolCall[] = [];
  const extras: LanguageModelV4Content[] = [];
  let warnings: SharedV4Warning[] = [];
  let metadata: LanguageModelV4ResponseMetadata | undefined;
  let finish: Extract<LanguageModelV4StreamPart, { type: "finish" }> | undefined;
  const reader = result.stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case "text-delta":
          text += part.delta;
          if (part.delta !== "") sink?.delta("content", part.delta);
          break;
        case "reasoning-delta":
          reasoning += part.delta;
          if (part.delta !== "") sink?.delta("reasoning", part.delta);
          break;
        case "tool-call":
          calls.push(part);
          break;
        case "stream-start":
          warnings = part.warnings;
          sink?.warnings(warnings);
          break;
        case "response-metadata": {
          const { type: _type, ...rest } = part;
          metadata = rest;
          sink?.metadata(rest);
          break;
        }
        case "finish":
          finish = part;
          break;
        case "error":
          throw part.error;
        case "file":
        case "source":
        case "tool-result":
        case "tool-approval-request":
        case "custom":
        case "reasoning-file":
          extras.push(part);
          break;
        default:
          // Block boundaries, tool-input deltas, raw chunks, pings: rebuilt or not needed once the answer is whole.
          break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  if (!finish) throw new StreamError("The wrapped model's stream ended without a finish part");
  return {
    llm: responseOf(text, reasoning, calls, finish.usage),
    usage: finish.usage,
    finishReason: finish.finishReason,
    providerMetadata: finish.providerMetadata,
    streamMetadata: metadata,
    streamRecords: { request: result.request, response: result.response },
    warnings,
    calls: new Map(calls.map((c) => [c.toolCallId, c])),
    extras,
  };
}

const add = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));

/**
 * Usage summed over a call's attempts: the retries cost tokens too.
 *
 * @example
 * sumUsage(first.usage, second.usage).inputTokens.total;
 */
export function sumUsage(a: LanguageModelV4Usage, b: LanguageModelV4Usage): LanguageModelV4Usage {
  const usage: LanguageModelV4Usage = {
    inputTokens: {
      total: add(a.inputTokens.total, b.inputTokens.total),
      noCache: add(a.inputTokens.noCache, b.inputTokens.noCache),
      cacheRead: add(a.inputTokens.cacheRead, b.inputTokens.cacheRead),
      cacheWrite: add(a.inputTokens.cacheWrite, b.inputTokens.cacheWrite),
    },
    outputTokens: {
      total: add(a.outputTokens.total, b.outputTokens.total),
      text: add(a.outputTokens.text, b.outputTokens.text),
      reasoning: add(a.outputTokens.reasoning, b.outputTokens.reasoning),
    },
  };
  if (b.raw !== undefined) usage.raw = b.raw;
  return usage;
}
