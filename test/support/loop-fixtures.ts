/**
 * Shared fixtures for loop tests: a small workflow whose tools log every execution, and a
 * client driven by a policy function of the conversation (not of call order), so a run
 * restored from a snapshot gets the same answers as the uninterrupted run.
 */
import { z } from "zod";
import { ContextManager, estimateTokensChars4, NoCompact } from "../../src/context/index.js";
import {
  defineTool,
  ToolResolutionError,
  Workflow,
  type LLMClient,
  type LLMResponse,
  type SendOptions,
  type StreamChunk,
  type ToolSpec,
  type WireMessage,
} from "../../src/core/index.js";

export interface ToolLogEntry {
  tool: string;
  args: Record<string, unknown>;
  key: string;
}

const modeArgs = z.object({ mode: z.enum(["ok", "throw", "resolve"]).default("ok"), n: z.number().int().default(0) });

/**
 * Tools: `fetch_a` (required), `fetch_b` (required, prerequisite fetch_a), `extra` (optional),
 * `finish` (terminal). `mode: "throw"` raises, `mode: "resolve"` raises ToolResolutionError.
 */
export function loopWorkflow(log: ToolLogEntry[] = []) {
  const behave = (tool: string) => (args: z.output<typeof modeArgs>, ctx: { idempotencyKey: string }) => {
    log.push({ tool, args, key: ctx.idempotencyKey });
    if (args.mode === "throw") throw new TypeError(`${tool} exploded on n=${args.n}`);
    if (args.mode === "resolve") throw new ToolResolutionError(`no record ${args.n} for ${tool}`, tool);
    return { tool, n: args.n };
  };
  const workflow = new Workflow({
    name: "loop-test",
    description: "fixture",
    tools: {
      fetch_a: defineTool({ name: "fetch_a", description: "first step", parameters: modeArgs, execute: behave("fetch_a") }),
      fetch_b: defineTool({
        name: "fetch_b",
        description: "second step",
        parameters: modeArgs,
        execute: behave("fetch_b"),
        prerequisites: ["fetch_a"],
      }),
      extra: defineTool({ name: "extra", description: "optional", parameters: modeArgs, execute: behave("extra") }),
      finish: defineTool({
        name: "finish",
        description: "terminal",
        parameters: z.object({ summary: z.string() }),
        execute: ({ summary }, ctx) => {
          log.push({ tool: "finish", args: { summary }, key: ctx.idempotencyKey });
          return { done: summary };
        },
      }),
    },
    requiredSteps: ["fetch_a", "fetch_b"],
    terminalTool: "finish",
    systemPromptTemplate: "You are testing. Company: {company}.",
  });
  return { workflow, log };
}

export const call = (tool: string, args: unknown = {}): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args }] });
export const calls = (...list: [string, unknown][]): LLMResponse => ({
  type: "tool_calls",
  toolCalls: list.map(([tool, args]) => ({ tool, args })),
});
export const text = (content: string, reasoning?: string): LLMResponse =>
  reasoning === undefined ? { type: "text", content } : { type: "text", content, reasoning };

/** Assistant turns so far = index of the request within this conversation. */
export function turnOf(messages: readonly WireMessage[]): number {
  return messages.filter((m) => m.role === "assistant").length;
}

export type Policy = (messages: WireMessage[], tools: ToolSpec[] | undefined, signal: AbortSignal | undefined) => LLMResponse | Promise<LLMResponse>;

/** An LLMClient whose answer is a pure function of the request. */
export class PolicyClient implements LLMClient {
  readonly apiFormat = "openai" as const;
  readonly requests: WireMessage[][] = [];
  constructor(private readonly policy: Policy) {}
  async send(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): Promise<LLMResponse> {
    options?.signal?.throwIfAborted();
    this.requests.push(structuredClone(messages));
    return this.policy(messages, tools, options?.signal);
  }
  async *sendStream(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): AsyncIterable<StreamChunk> {
    const response = await this.send(messages, tools, options);
    if (response.type === "text") {
      for (const piece of response.content.match(/.{1,4}/gs) ?? []) yield { type: "text_delta", content: piece };
    } else {
      for (const [index, c] of response.toolCalls.entries()) {
        yield { type: "tool_call_delta", index, name: c.tool, content: JSON.stringify(c.args) };
      }
    }
    yield { type: "final", response };
  }
  async getContextLength(): Promise<number | undefined> {
    return undefined;
  }
}

/** A policy that plays `script[turn]`, then the correct path (fetch_a, fetch_b, finish). */
export function scriptThenCorrect(script: readonly LLMResponse[]): Policy {
  return (messages) => {
    const turn = turnOf(messages);
    const scripted = script[turn];
    if (scripted) return structuredClone(scripted);
    return correctNext(messages);
  };
}

/** The right next call given the successful results in the conversation. */
export function correctNext(messages: readonly WireMessage[]): LLMResponse {
  const succeeded = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool" && typeof m.content === "string" && !m.content.startsWith("[")) {
      const name = (m as { name?: string }).name;
      if (name) succeeded.add(name);
    }
  }
  if (!succeeded.has("fetch_a")) return call("fetch_a", { mode: "ok", n: 1 });
  if (!succeeded.has("fetch_b")) return call("fetch_b", { mode: "ok", n: 2 });
  return call("finish", { summary: "all done" });
}

/**
 * A context manager that never compacts but whose compaction service runs every iteration
 * (a custom estimator decides), so runs pass through `compacting.running` and can be
 * snapshotted there.
 */
export function compactingEveryIteration(): ContextManager {
  return new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000, estimateTokens: (messages) => estimateTokensChars4(messages) });
}
