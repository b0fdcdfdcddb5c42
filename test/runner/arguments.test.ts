/**
 * Untyped errors from bad arguments: everything the runner is handed from outside is checked
 * where it comes in and refused with an InvalidArgumentError naming the argument.
 */
import { describe, expect, it } from "vitest";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import { createMessage, InvalidArgumentError, MessageType, type LLMClient } from "../../src/core/index.js";
import { WorkflowRunner, type RunOptions } from "../../src/runner.js";
import { loopWorkflow, PolicyClient, scriptThenCorrect } from "../support/loop-fixtures.js";

const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 });
const runner = () => new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect([])), contextManager: cm() });
const { workflow } = loopWorkflow();

async function invalid(p: Promise<unknown>, argument: string): Promise<void> {
  const error = await p.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect(error).toMatchObject({ argument });
}

describe("runner construction", () => {
  it("a client without (or with an unknown) apiFormat", () => {
    const noFormat = { send: async () => ({ type: "text", content: "" }), getContextLength: async () => undefined } as unknown as LLMClient;
    expect(() => new WorkflowRunner({ client: noFormat, contextManager: cm() })).toThrow(/client\.apiFormat must be "ollama" or "openai", got undefined/);
    const odd = { ...noFormat, apiFormat: "anthropic" } as unknown as LLMClient;
    expect(() => new WorkflowRunner({ client: odd, contextManager: cm() })).toThrow(InvalidArgumentError);
  });
});

describe("run() arguments", () => {
  it("run(undefined) and other non-workflows", async () => {
    await invalid(runner().run(undefined as never, "go"), "workflow");
    await invalid(runner().run({ name: "x" } as never, "go"), "workflow");
  });

  it.each<[string, unknown, string]>([
    ["signal: {}", { signal: {} }, "signal"],
    ["initialMessages: [5]", { initialMessages: [5] }, "initialMessages"],
    ["initialMessages: not an array", { initialMessages: "hi" }, "initialMessages"],
    ["a message with a bad role", { initialMessages: [{ role: "robot", content: "x", meta: { type: "user_input" } }] }, "initialMessages"],
    ["a message with BigInt args", { initialMessages: [{ ...createMessage("assistant", "", MessageType.TOOL_CALL), toolCalls: [{ name: "fetch_a", args: { n: 1n }, callId: "c" }] }] }, "initialMessages"],
    ["promptVars of numbers", { promptVars: { company: 5 } }, "promptVars"],
    ["an empty runId", { runId: "" }, "runId"],
    ["options: null", null, "options"],
  ])("%s", async (_name, options, argument) => {
    await invalid(runner().run(workflow, "go", options as RunOptions), argument);
  });

  it("names the offending entry of initialMessages", async () => {
    const good = createMessage("system", "sys", MessageType.SYSTEM_PROMPT);
    const error = await runner()
      .run(workflow, "go", { initialMessages: [good, { role: "user" } as never] })
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/entry 1 is not a message \(content:/);
  });

  it("from and initialMessages together are ambiguous", async () => {
    const first = runner();
    await first.run(workflow, "go", { promptVars: { company: "A" } });
    await invalid(runner().run(workflow, "again", { from: first.snapshot(), initialMessages: [] }), "from");
  });

  it("valid initialMessages still run", async () => {
    const seed = [createMessage("system", "You are testing.", MessageType.SYSTEM_PROMPT)];
    await expect(runner().run(workflow, "go", { initialMessages: seed, signal: new AbortController().signal })).resolves.toEqual({ done: "all done" });
  });
});

describe("resume() arguments", () => {
  it("a missing workflow or a bogus signal", async () => {
    const first = runner();
    await first.run(workflow, "go", { promptVars: { company: "A" } });
    const snap = JSON.parse(JSON.stringify(first.snapshot()));
    await invalid(runner().resume(snap, undefined as never), "workflow");
    await invalid(runner().resume(snap, workflow, { signal: {} as AbortSignal }), "signal");
  });
});
