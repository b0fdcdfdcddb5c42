/**
 * SimulatedClient: the embedded default "model". It reads the serialized conversation like a
 * backend would, asks an oracle for the correct next step, and answers the way a small local
 * model does — mostly right, sometimes with one of the mistakes in its fault profile.
 *
 * Determinism: each request gets its own PRNG seeded from (seed, the conversation it was
 * sent minus call ids, the tools offered), so the same seed and conversation always give the
 * same answer — across processes, after a snapshot restore, whatever ids the runner mints,
 * and whether asked via send or sendStream.
 *
 * A request whose tool_choice forces a call ("required" or a named function, as RequestOverrides
 * carry it) is answered as a grammar-constrained backend would: always with a call, never prose.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { LLMClient, LLMResponse, SendOptions, StreamChunk, ToolCall, ToolChoice, Usage } from "../core/llm.js";
import type { ApiFormat, WireMessage } from "../core/wire-messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";
import { CORRECTION_DAMPING, resolveFaultProfile, type FaultKind, type FaultProfile, FAULT_PROFILES } from "./fault-profiles.js";
import { createPrng, hashString, type Prng } from "./prng.js";
import { applicableMistakes, forcedCall, injectMistake, reasoningFor, type Mistake, type Utterance } from "./simulated-faults.js";
import { abortableDelay, argsText, responseDeltas, throwIfAborted } from "./simulated-stream.js";
import { conversationKey, readConversation, type OracleView } from "./simulated-view.js";

export type { OracleView } from "./simulated-view.js";
export { FAULT_PROFILES, CORRECTION_DAMPING, type FaultKind, type FaultProfile } from "./fault-profiles.js";

export type OracleStep =
  | { tool: string; args: Record<string, unknown> }
  | { calls: { tool: string; args: Record<string, unknown> }[] }
  | { text: string };

/** The correct next step of a workflow, given what the model has seen so far. */
export type Oracle = (view: OracleView) => OracleStep;

export interface SimulatedClientOptions {
  oracle: Oracle;
  /** Needed for premature_terminal and prerequisite_violation faults. */
  workflow?: Workflow;
  /** Default "clean". */
  profile?: keyof typeof FAULT_PROFILES | FaultProfile;
  /** Default 0. */
  seed?: number;
  /** Default "openai". */
  apiFormat?: ApiFormat;
  /** What getContextLength() reports (undefined = unknown, like a backend without /props). */
  contextLength?: number;
  /** Fixed delta size in characters for sendStream; default: word-sized deltas. */
  chunkSize?: number;
  /** Attach a chars/4 token estimate to every response (and lastUsage). */
  usage?: boolean;
  /** Simulated time to first token, in ms (abortable). Default 0. */
  latencyMs?: number;
}

/** One decided request, for tests and eval metrics. */
export interface SimulatedTurn {
  request: number;
  turn: number;
  step: OracleStep;
  fault?: Mistake;
  reasoning: boolean;
  response: LLMResponse;
}

function normalizeStep(step: OracleStep, toolNames: readonly string[]): Utterance {
  const bad = (msg: string): never => {
    throw new InvalidArgumentError("oracle", `${msg}; got ${JSON.stringify(step)}`);
  };
  if (!isPlainObject(step)) bad("the oracle must return { tool, args }, { calls } or { text }");
  if ("text" in step) return typeof step.text === "string" ? { kind: "text", text: step.text } : bad("text must be a string");
  const calls = "calls" in step ? step.calls : [step];
  if (!Array.isArray(calls) || calls.length === 0) bad("calls must be a non-empty array");
  for (const c of calls) {
    if (!isPlainObject(c) || typeof c.tool !== "string" || !isPlainObject(c.args)) bad("each call needs a tool name and object args");
    if (!toolNames.includes(c.tool)) bad(`"${c.tool}" is not among the tools offered [${toolNames.join(", ")}]`);
  }
  return { kind: "calls", calls: calls.map((c) => ({ tool: c.tool, args: c.args })) };
}

/**
 * Whether a request forces a tool call, and which tool when it names one. Like a backend, the
 * simulator applies tool_choice only when tools are offered; a named tool must be one of them.
 */
function forcedTool(choice: ToolChoice | undefined, toolNames: readonly string[]): { named?: string } | undefined {
  if (choice === undefined || toolNames.length === 0 || choice === "auto" || choice === "none") return undefined;
  if (choice === "required") return {};
  const name = isPlainObject(choice) && isPlainObject(choice.function) ? choice.function.name : undefined;
  if (typeof name !== "string") throw new InvalidArgumentError("toolChoice", `expected "auto", "none", "required" or { type: "function", function: { name } }, got ${JSON.stringify(choice)}`);
  if (!toolNames.includes(name)) throw new InvalidArgumentError("toolChoice", `names "${name}", which is not among the tools offered [${toolNames.join(", ")}]`);
  return { named: name };
}

function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/**
 * @example
 * const { workflow, oracle, userInput, promptVars } = supplierQuoteWorkflow();
 * const client = new SimulatedClient({ oracle, workflow, profile: "small-model", seed: 3 });
 * const res = await client.send([{ role: "user", content: userInput }], workflow.getToolSpecs());
 * client.injected; // e.g. [] or ["rescue_format"]
 */
export class SimulatedClient implements LLMClient {
  readonly apiFormat: ApiFormat;
  /** Every fault injected, in order (reasoning included), across all requests. */
  readonly injected: FaultKind[] = [];
  /** Every request's decision, in order. */
  readonly log: SimulatedTurn[] = [];
  /** Part of the client surface; the simulated stream never needs an internal retry. */
  streamRetries = 0;
  lastUsage?: Usage;
  readonly profile: FaultProfile;
  readonly seed: number;
  readonly #oracle: Oracle;
  readonly #workflow: Workflow | undefined;
  readonly #contextLength: number | undefined;
  readonly #chunkSize: number | undefined;
  readonly #usage: boolean;
  readonly #latencyMs: number;
  #calls = 0;

  constructor(options: SimulatedClientOptions) {
    if (!isPlainObject(options)) throw new InvalidArgumentError("options", "must be an object");
    if (typeof options.oracle !== "function") throw new InvalidArgumentError("oracle", "must be a function (view) => step");
    const seed = options.seed ?? 0;
    if (!Number.isInteger(seed)) throw new InvalidArgumentError("seed", `must be an integer, got ${String(seed)}`);
    const apiFormat = options.apiFormat ?? "openai";
    if (apiFormat !== "openai" && apiFormat !== "ollama") throw new InvalidArgumentError("apiFormat", 'use "openai" or "ollama"');
    const positive = (name: string, v: number | undefined, allowZero: boolean) => {
      if (v !== undefined && !(Number.isInteger(v) && (allowZero ? v >= 0 : v > 0))) {
        throw new InvalidArgumentError(name, `must be a ${allowZero ? "non-negative" : "positive"} integer, got ${String(v)}`);
      }
    };
    positive("contextLength", options.contextLength, false);
    positive("chunkSize", options.chunkSize, false);
    positive("latencyMs", options.latencyMs, true);
    this.profile = resolveFaultProfile(options.profile);
    this.seed = seed;
    this.apiFormat = apiFormat;
    this.#oracle = options.oracle;
    this.#workflow = options.workflow;
    this.#contextLength = options.contextLength;
    this.#chunkSize = options.chunkSize;
    this.#usage = options.usage ?? false;
    this.#latencyMs = options.latencyMs ?? 0;
  }

  /** Requests answered (or decided, for streams) so far. */
  get calls(): number {
    return this.#calls;
  }

  async send(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): Promise<LLMResponse> {
    throwIfAborted(options?.signal);
    const { response } = this.#decide(messages, tools, options?.request?.toolChoice);
    await abortableDelay(this.#latencyMs, options?.signal);
    return response;
  }

  async *sendStream(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): AsyncIterable<StreamChunk> {
    const signal = options?.signal;
    throwIfAborted(signal);
    const { response, rng } = this.#decide(messages, tools, options?.request?.toolChoice);
    await abortableDelay(this.#latencyMs, signal);
    for (const chunk of responseDeltas(response, rng, this.#chunkSize)) {
      // Yield to the event loop between deltas so an abort from elsewhere lands promptly.
      await new Promise<void>((resolve) => setImmediate(resolve));
      throwIfAborted(signal);
      yield chunk;
    }
    throwIfAborted(signal);
    yield { type: "final", response };
  }

  async getContextLength(): Promise<number | undefined> {
    return this.#contextLength;
  }

  /**
   * Decide this request's answer once; the returned PRNG continues for stream pacing. A
   * `toolChoice` of "required" or a named function (sent only with tools, as on the wire)
   * forces a call: the oracle's text becomes a call and no mistake is prose.
   */
  #decide(messages: WireMessage[], tools: ToolSpec[] | undefined, toolChoice: ToolChoice | undefined): { response: LLMResponse; rng: Prng } {
    if (tools !== undefined && !Array.isArray(tools)) throw new InvalidArgumentError("tools", "must be an array of ToolSpec");
    const { view, corrected } = readConversation(messages, tools ?? []);
    const step = this.#oracle(view);
    const forced = forcedTool(toolChoice, view.toolNames);
    const oracleSaid = normalizeStep(step, view.toolNames);
    const correct: Utterance =
      forced && oracleSaid.kind === "text"
        ? { kind: "calls", calls: [forcedCall(oracleSaid.text, { tools: tools ?? [], workflow: this.#workflow, named: forced.named })] }
        : oracleSaid;
    const rng = createPrng(hashString(conversationKey(messages, view.toolNames), this.seed));

    const rates = this.profile.rates;
    const damping = corrected ? CORRECTION_DAMPING : 1;
    const ctx = { correct, view, tools: tools ?? [], workflow: this.#workflow, formats: this.profile.formats, forced: forced !== undefined };
    let fault: Mistake | undefined;
    let roll = rng.next();
    for (const kind of applicableMistakes(ctx)) {
      roll -= (rates[kind] ?? 0) * damping;
      if (roll < 0) {
        fault = kind;
        break;
      }
    }
    const utterance = fault ? injectMistake(fault, ctx, rng) : correct;
    const withReasoning = rng.chance(rates.reasoning ?? 0);
    // The thought is about the right move even when the output then goes wrong, as with real models.
    const reasoning = withReasoning ? reasoningFor(correct, view, rng) : undefined;
    const response = this.#toResponse(utterance, reasoning, fault === "rescue_format", view.turn, rng);
    if (this.#usage) {
      const inputChars = JSON.stringify(messages).length + (tools ? JSON.stringify(tools).length : 0);
      const out = response.type === "text" ? response.content : response.toolCalls.map((c) => c.tool + argsText(c.args)).join("");
      const usage = { inputTokens: estimateTokens(inputChars), outputTokens: estimateTokens(out.length + (reasoning?.length ?? 0)) };
      response.usage = usage;
      this.lastUsage = usage;
    }
    if (fault) this.injected.push(fault);
    if (withReasoning) this.injected.push("reasoning");
    const turn: SimulatedTurn = { request: this.#calls, turn: view.turn, step, reasoning: withReasoning, response };
    if (fault) turn.fault = fault;
    this.log.push(turn);
    this.#calls++;
    return { response, rng };
  }

  #toResponse(utterance: Utterance, reasoning: string | undefined, inlineThink: boolean, turn: number, rng: Prng): LLMResponse {
    if (utterance.kind === "text") {
      // A model that writes its call as text also writes its thinking inline, as Qwen/DeepSeek do.
      if (reasoning !== undefined && inlineThink) return { type: "text", content: `<think>${reasoning}</think>\n${utterance.text}` };
      return reasoning === undefined ? { type: "text", content: utterance.text } : { type: "text", content: utterance.text, reasoning };
    }
    const toolCalls: ToolCall[] = utterance.calls.map((c, i) => {
      const call: ToolCall = { tool: c.tool, args: c.args };
      // Ollama does not send call ids; OpenAI-style backends do.
      if (this.apiFormat === "openai") call.id = `call_${turn}_${i}_${rng.int(0xffffff).toString(16).padStart(6, "0")}`;
      return call;
    });
    return reasoning === undefined ? { type: "tool_calls", toolCalls } : { type: "tool_calls", toolCalls, reasoning };
  }
}
