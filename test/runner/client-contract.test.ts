/**
 * Untyped errors from clients: a response that breaks the LLMResponse contract fails the run
 * with a ClientContractError naming the client and the bad value; oversized and over-deep
 * batches are refused with a nudge the model can act on.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import {
  ClientContractError,
  defineTool,
  ToolCallError,
  Workflow,
  type LLMClient,
  type LLMResponse,
  type Message,
  type StreamChunk,
} from "../../src/core/index.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../../src/runner.js";
import { call, correctNext, loopWorkflow, PolicyClient, scriptThenCorrect, turnOf } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };
const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 10_000_000 });

function runFirst(first: unknown, options: Partial<WorkflowRunnerOptions> = {}) {
  const { workflow, log } = loopWorkflow();
  const client = new PolicyClient((messages) => (turnOf(messages) === 0 ? (first as LLMResponse) : correctNext(messages)));
  const messages: Message[] = [];
  const runner = new WorkflowRunner({ client, contextManager: cm(), onMessage: (m) => messages.push(m), ...options });
  return { runner, log, messages, client, run: runner.run(workflow, "go", vars) };
}

const nested = (depth: number): unknown => JSON.parse('{"a":'.repeat(depth) + "1" + "}".repeat(depth));

describe("responses that break the LLMResponse contract", () => {
  it.each<[string, unknown, RegExp]>([
    ["null", null, /expected object/i],
    ["{}", {}, /type/],
    ['{type:"bogus"}', { type: "bogus" }, /type/],
    ["toolCalls: null", { type: "tool_calls", toolCalls: null }, /toolCalls/],
    ["toolCalls: [null]", { type: "tool_calls", toolCalls: [null] }, /toolCalls\.0/],
    ["text without content", { type: "text" }, /content/],
    ["reasoning: 5", { type: "text", content: "x", reasoning: 5 }, /reasoning/],
    ["usage of strings", { type: "text", content: "x", usage: { inputTokens: "1", outputTokens: 2 } }, /usage\.inputTokens/],
    ["BigInt args", { type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: { n: 1n } }] }, /bigint at toolCalls\[0\]\.args\.n/],
    ["20,000-deep args", { type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: nested(20_000) }] }, /nesting deeper than 512/],
  ])("%s → ClientContractError naming the client", async (_name, bad, issue) => {
    const { run } = runFirst(bad);
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientContractError);
    expect(error).toMatchObject({ code: "FORGE_CLIENT_CONTRACT", client: "PolicyClient" });
    expect((error as ClientContractError).message).toMatch(issue);
    expect((error as ClientContractError).message).not.toMatch(/^Invalid text/);
    expect(typeof (error as ClientContractError).received).toBe("string");
  });

  it("a client's own rescued: true marker on tool calls is part of the contract", async () => {
    const { run } = runFirst({ type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: { n: 1 } }], rescued: true });
    await expect(run).resolves.toEqual({ done: "all done" });
  });

  it("streaming: a bad FINAL response, a null chunk, or a non-iterable stream", async () => {
    const { workflow } = loopWorkflow();
    const streaming = (sendStream: () => unknown): LLMClient => ({
      apiFormat: "openai",
      send: () => Promise.reject(new Error("unused")),
      sendStream: sendStream as LLMClient["sendStream"],
      getContextLength: async () => undefined,
    });
    const chunks = (list: unknown[]) =>
      async function* () {
        for (const c of list) yield c as StreamChunk;
      };
    const run = (client: LLMClient) =>
      new WorkflowRunner({ client, contextManager: cm(), stream: true }).run(workflow, "go", vars).catch((e: unknown) => e);
    const badFinal = await run(streaming(chunks([{ type: "final", response: { type: "text" } }])));
    expect(badFinal).toMatchObject({ code: "FORGE_CLIENT_CONTRACT", client: "Object" });
    expect(await run(streaming(chunks([null])))).toMatchObject({ code: "FORGE_CLIENT_CONTRACT", issues: [expect.stringMatching(/chunk/)] });
    expect(await run(streaming(() => 42))).toMatchObject({ code: "FORGE_CLIENT_CONTRACT", issues: [expect.stringMatching(/AsyncIterable/)] });
  });

  it("no NaN from a malformed reasoning: the run fails before any estimate is made", async () => {
    const { runner, run } = runFirst({ type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: {} }], reasoning: 5 });
    await expect(run).rejects.toBeInstanceOf(ClientContractError);
    expect(Number.isNaN(runner.lastRunStats!.usage.inputTokens)).toBe(false);
  });
});

describe("maxToolCallsPerResponse", () => {
  it("10,000 calls in one response: refused with a retry nudge, promptly, and the model recovers", async () => {
    const many: LLMResponse = { type: "tool_calls", toolCalls: Array.from({ length: 10_000 }, (_, n) => ({ tool: "extra", args: { n } })) };
    const start = performance.now();
    const { run, messages, log, runner } = runFirst(many);
    await expect(run).resolves.toEqual({ done: "all done" });
    expect(performance.now() - start).toBeLessThan(3_000);
    const nudge = messages.find((m) => m.meta.type === "retry_nudge");
    expect(nudge).toMatchObject({ role: "user" });
    expect(nudge!.content).toMatch(/10000 tool calls; at most 64/);
    expect(log.filter((e) => e.tool === "extra")).toEqual([]);
    expect(runner.lastRunStats?.retryNudges).toBe(1);
    expect(JSON.stringify(runner.snapshot()).length).toBeLessThan(1_000_000);
  });

  it("is configurable and counts against the retry budget", async () => {
    const three = { type: "tool_calls", toolCalls: [call("extra", { n: 1 }), call("extra", { n: 2 }), call("extra", { n: 3 })].map((r) => (r as { toolCalls: unknown[] }).toolCalls[0]) };
    const { run } = runFirst(three, { maxToolCallsPerResponse: 2, maxRetries: 0 });
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect((error as ToolCallError).lastError).toMatch(/3 tool calls; at most 2/);
  });

  it("applies to calls rescued from text too", async () => {
    const text = Array.from({ length: 3 }, (_, n) => `\`\`\`json\n{"tool": "extra", "args": {"n": ${n}}}\n\`\`\``).join("\n");
    const { run, messages } = runFirst({ type: "text", content: text }, { maxToolCallsPerResponse: 2 });
    await expect(run).resolves.toEqual({ done: "all done" });
    expect(messages.find((m) => m.meta.type === "retry_nudge")?.content).toMatch(/3 tool calls/);
  });

  it("must be a positive integer", () => {
    const client = new PolicyClient(scriptThenCorrect([]));
    for (const bad of [0, -1, 1.5, "64"]) {
      expect(() => new WorkflowRunner({ client, contextManager: cm(), maxToolCallsPerResponse: bad as number })).toThrow(/maxToolCallsPerResponse/);
    }
  });
});

describe("hostile argument depth with a recursive schema", () => {
  const node = { type: "object", properties: { a: { $ref: "#/$defs/node" } } };
  const recursive = () => {
    const { workflow } = loopWorkflow();
    const tree = defineTool({ name: "tree", description: "recursive", jsonSchema: { ...node, $defs: { node } }, execute: () => "ok" });
    return new Workflow({ ...workflow, tools: { ...workflow.tools, tree }, requiredSteps: [...workflow.requiredSteps], terminalTool: "finish" });
  };

  it("20,000-deep args rescued from text: a retry nudge, not a RangeError", async () => {
    const deepText = '```json\n{"tool": "tree", "args": ' + '{"a":'.repeat(20_000) + "{}" + "}".repeat(20_000) + "}\n```";
    const client = new PolicyClient((messages) => (turnOf(messages) === 0 ? { type: "text", content: deepText } : correctNext(messages)));
    const messages: Message[] = [];
    const runner = new WorkflowRunner({ client, contextManager: cm(), onMessage: (m) => messages.push(m) });
    await expect(runner.run(recursive(), "go", vars)).resolves.toEqual({ done: "all done" });
    expect(messages.find((m) => m.meta.type === "retry_nudge")?.content).toMatch(/nested more than 256 levels/);
    expect(() => JSON.stringify(runner.snapshot())).not.toThrow();
  });

  it("300-deep args in a structured call: the same nudge (the history never holds them)", async () => {
    const deep = { type: "tool_calls", toolCalls: [{ tool: "tree", args: nested(300) }] };
    const client = new PolicyClient((messages) => (turnOf(messages) === 0 ? (deep as LLMResponse) : correctNext(messages)));
    const runner = new WorkflowRunner({ client, contextManager: cm(), maxRetries: 0 });
    const error = await runner.run(recursive(), "go", vars).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect((error as ToolCallError).lastError).toMatch(/nested more than 256 levels/);
  });

  it("the tool's validator reports over-deep args as an issue instead of throwing", () => {
    const tree = recursive().tools.tree!;
    const result = tree.validateArgs(nested(20_000));
    expect(result).toMatchObject({ ok: false, issues: [{ path: "(root)", message: expect.stringMatching(/nested too deeply/) }] });
    const Node: z.ZodType = z.lazy(() => z.object({ a: z.union([Node, z.number()]) }));
    const zodTree = defineTool({ name: "ztree", description: "", parameters: z.object({ a: Node }), execute: () => 1 });
    expect(zodTree.validateArgs(nested(50)).ok).toBe(true);
    expect(zodTree.validateArgs(nested(20_000))).toMatchObject({ ok: false, issues: [{ message: expect.stringMatching(/nested too deeply/) }] });
  });
});
