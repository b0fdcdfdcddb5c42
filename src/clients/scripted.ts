/**
 * ScriptedClient: plays a fixed list of responses, for tests of the loop. It records what it
 * was sent so a test can assert on the exact wire conversation.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { LLMClient, LLMResponse, RequestOverrides, SendOptions, StreamChunk } from "../core/llm.js";
import type { ApiFormat, WireMessage } from "../core/wire-messages.js";
import type { ToolSpec } from "../core/tool.js";
import { createPrng } from "./prng.js";
import { abortableDelay, responseDeltas, throwIfAborted } from "./simulated-stream.js";

export type ScriptedResponse =
  | LLMResponse
  | ((messages: WireMessage[], tools?: ToolSpec[]) => LLMResponse | Promise<LLMResponse>);

export interface ScriptedClientOptions {
  responses: ScriptedResponse[];
  /** Default "openai". */
  apiFormat?: ApiFormat;
  /** Offer sendStream (default true); false makes this a client without streaming support. */
  stream?: boolean;
  /** Wait this long (abortably) before each answer. Default 0. */
  delayMs?: number;
  /** What getContextLength() reports; default undefined (unknown). */
  contextLength?: number;
}

/** One recorded request: what the loop sent, and the per-request overrides when there were any. */
export interface ScriptedRequest {
  messages: WireMessage[];
  tools?: ToolSpec[];
  request?: RequestOverrides;
}

type SendStream = (messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions) => AsyncIterable<StreamChunk>;

/**
 * @example
 * const client = new ScriptedClient({ responses: [
 *   toolCallsResponse([{ tool: "get_weather", args: { city: "Paris" }, id: "c1" }]),
 *   (messages) => textResponse(`saw ${messages.length} messages`),
 * ] });
 * await client.send([{ role: "user", content: "hi" }]);
 * client.requests.length; // 1
 */
export class ScriptedClient implements LLMClient {
  readonly apiFormat: ApiFormat;
  /** What it was sent, one entry per request (deep copies, so later mutation cannot rewrite them). */
  readonly requests: ScriptedRequest[] = [];
  /** Present unless constructed with `stream: false`. */
  readonly sendStream?: SendStream;
  readonly #responses: ScriptedResponse[];
  readonly #delayMs: number;
  readonly #contextLength: number | undefined;

  constructor(options: ScriptedClientOptions) {
    if (typeof options !== "object" || options === null) throw new InvalidArgumentError("options", "must be an object");
    if (!Array.isArray(options.responses)) throw new InvalidArgumentError("responses", "must be an array of LLMResponse or functions");
    options.responses.forEach((r, i) => {
      const ok = typeof r === "function" || (typeof r === "object" && r !== null && (r.type === "text" || r.type === "tool_calls"));
      if (!ok) throw new InvalidArgumentError("responses", `entry ${i} is neither an LLMResponse nor a function: ${JSON.stringify(r)}`);
    });
    const apiFormat = options.apiFormat ?? "openai";
    if (apiFormat !== "openai" && apiFormat !== "ollama") throw new InvalidArgumentError("apiFormat", 'use "openai" or "ollama"');
    const delayMs = options.delayMs ?? 0;
    if (!(Number.isFinite(delayMs) && delayMs >= 0)) throw new InvalidArgumentError("delayMs", `must be >= 0, got ${String(delayMs)}`);
    this.apiFormat = apiFormat;
    this.#responses = [...options.responses];
    this.#delayMs = delayMs;
    this.#contextLength = options.contextLength;
    if (options.stream !== false) this.sendStream = (messages, tools, opts) => this.#stream(messages, tools, opts);
  }

  /** Responses not yet played. */
  get remaining(): number {
    return this.#responses.length - this.requests.length;
  }

  async send(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): Promise<LLMResponse> {
    throwIfAborted(options?.signal);
    const index = this.requests.length;
    const request: ScriptedRequest = { messages: structuredClone(messages) };
    if (tools !== undefined) request.tools = structuredClone(tools);
    if (options?.request !== undefined) request.request = structuredClone(options.request);
    this.requests.push(request);
    const entry = this.#responses[index];
    if (entry === undefined) {
      throw new Error(
        `ScriptedClient: no scripted response for request #${index} (the script has ${this.#responses.length}); ` +
          `last message: ${JSON.stringify(messages.at(-1) ?? null).slice(0, 300)}`,
      );
    }
    await abortableDelay(this.#delayMs, options?.signal);
    const response = typeof entry === "function" ? await entry(messages, tools) : entry;
    throwIfAborted(options?.signal);
    return structuredClone(response);
  }

  async getContextLength(): Promise<number | undefined> {
    return this.#contextLength;
  }

  async *#stream(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): AsyncIterable<StreamChunk> {
    const response = await this.send(messages, tools, options);
    // Fixed PRNG: scripted streams split the same way every run.
    const rng = createPrng(this.requests.length);
    for (const chunk of responseDeltas(response, rng)) {
      throwIfAborted(options?.signal);
      yield chunk;
    }
    yield { type: "final", response };
  }
}
