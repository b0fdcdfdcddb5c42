/**
 * Crashes from user code: a callback that throws (or rejects) fails the run with a
 * CallbackError naming it — never an uncaught exception (vitest fails the file on one) and
 * never a run() that stays pending.
 */
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { z } from "zod";
import { ContextManager, NoCompact, SlidingWindowCompact } from "../../src/context/index.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { CallbackError, InvalidArgumentError, type CallbackName } from "../../src/core/index.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../../src/runner.js";
import { loopWorkflow, PolicyClient, scriptThenCorrect } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };
const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 });

/**
 * A run that must settle: a pending run() fails the test here, naming the cause, instead of at
 * the test's timeout. The bound is generous (a loaded machine finishes these runs in well under
 * a second); it only tells a hang apart.
 */
async function settleWithin(p: Promise<unknown>, ms = 15_000): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`run() still pending after ${ms} ms`)), ms)));
  try {
    return await Promise.race([p.then(() => "resolved", (e: unknown) => e), hung]);
  } finally {
    clearTimeout(timer);
  }
}

function runWith(options: Partial<WorkflowRunnerOptions>) {
  const { workflow, log } = loopWorkflow();
  const client = new PolicyClient(scriptThenCorrect([]));
  const runner = new WorkflowRunner({ client, contextManager: cm(), ...options });
  return { runner, log, client, outcome: settleWithin(runner.run(workflow, "go", vars)) };
}

const boom = () => {
  throw new Error("boom");
};
const rejecting = () => Promise.reject(new Error("async boom"));

/** Each callback kind, throwing synchronously or returning a rejected promise. */
const cases: [CallbackName, "sync" | "async", Partial<WorkflowRunnerOptions>][] = [
  ["onStateChange", "sync", { onStateChange: boom }],
  ["onStateChange", "async", { onStateChange: rejecting as never }],
  ["onMessage", "sync", { onMessage: boom }],
  ["onMessage", "async", { onMessage: rejecting as never }],
  ["onChunk", "sync", { stream: true, onChunk: boom }],
  ["onChunk", "async", { stream: true, onChunk: rejecting }],
  ["inspect", "sync", { inspect: boom }],
  ["inspect", "async", { inspect: rejecting as never }],
];

describe("a failing callback fails the run with CallbackError", () => {
  it.each(cases)("%s (%s)", async (name, _kind, options) => {
    const { runner, outcome, client, log } = runWith(options);
    const error = await outcome;
    expect(error).toBeInstanceOf(CallbackError);
    expect(error).toMatchObject({ code: "FORGE_CALLBACK", data: { callback: name } });
    expect((error as CallbackError).message).toMatch(/boom/);
    expect((error as CallbackError).cause).toBeInstanceOf(Error);
    expect(runner.lastRunStats).toMatchObject({ outcome: "failed", error: { code: "FORGE_CALLBACK" } });
    // the run does not go on behind the failed promise: no further model calls or tools
    // A bounded negative check: the scripted model answers at once, so a run going on would have
    // asked again or started a tool within a few timer turns; a slower machine only does less.
    const seen = [client.requests.length, log.length];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([client.requests.length, log.length]).toEqual(seen);
    expect(() => JSON.stringify(runner.snapshot())).not.toThrow();
  });

  it("onStateChange throwing on the final state rejects instead of resolving (or hanging)", async () => {
    const { outcome } = runWith({ onStateChange: (state) => (state === "done" ? boom() : undefined) });
    expect(await outcome).toMatchObject({ data: { callback: "onStateChange" } });
  });

  it("an async onStateChange still pending at the end is awaited, and its rejection fails the run", async () => {
    const { outcome } = runWith({
      onStateChange: ((state: string) =>
        state === "done" ? new Promise((_, reject) => setTimeout(() => reject(new Error("late")), 20)) : undefined) as never,
    });
    expect(await outcome).toMatchObject({ data: { callback: "onStateChange", error: "Error: late" } });
  });

  it("inspect failing on the very first event (while the actor is created)", async () => {
    const { outcome } = runWith({ inspect: (event: InspectionEvent) => (event.type === "@xstate.actor" ? boom() : undefined) });
    expect(await outcome).toMatchObject({ data: { callback: "inspect" } });
  });

  it("an inspect observer object whose next throws", async () => {
    const { outcome } = runWith({ inspect: { next: boom } });
    expect(await outcome).toMatchObject({ data: { callback: "inspect" } });
  });

  it("a tool in the step whose message callback failed does not start", async () => {
    const { log, outcome } = runWith({ onMessage: (m) => (m.meta.type === "tool_call" ? boom() : undefined) });
    expect(await outcome).toBeInstanceOf(CallbackError);
    expect(log).toEqual([]);
  });

  it("a thrown value whose toString throws still becomes a CallbackError", async () => {
    const hostile = { toString: boom };
    const { outcome } = runWith({
      onMessage: () => {
        throw hostile;
      },
    });
    const error = await outcome;
    expect(error).toBeInstanceOf(CallbackError);
    expect((error as CallbackError).cause).toBe(hostile);
  });
});

describe("callbacks are validated at construction", () => {
  const client = new PolicyClient(scriptThenCorrect([]));
  it.each([
    ["onStateChange", { onStateChange: 5 }],
    ["onMessage", { onMessage: "log" }],
    ["onChunk", { stream: true, onChunk: {} }],
    ["inspect", { inspect: 5 }],
    ["inspect", { inspect: {} }],
    ["now", { now: 1 }],
    ["stream", { stream: "yes" }],
  ])("rejects a non-function %s", (name, bad) => {
    const make = () => new WorkflowRunner({ client, contextManager: cm(), ...(bad as object) });
    expect(make).toThrow(InvalidArgumentError);
    expect(make).toThrow(new RegExp(name));
  });
});

describe("user code that breaks the context's invariants", () => {
  it("an onCompact that throws fails the run with CallbackError (not a raw Error)", async () => {
    const { workflow } = loopWorkflow();
    const contextManager = new ContextManager({ strategy: new SlidingWindowCompact({ keepRecent: 1 }), budgetTokens: 400, compactThreshold: 0.1, onCompact: boom });
    const runner = new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect([])), contextManager });
    const error = await settleWithin(runner.run(workflow, "go ".repeat(60), vars));
    expect(error).toBeInstanceOf(CallbackError);
    expect(error).toMatchObject({ code: "FORGE_CALLBACK", data: { callback: "onCompact" } });
  });

  it("a tool that mutates its arguments (a BigInt, a cycle) cannot reach the context: the run finishes and snapshots", async () => {
    const { workflow } = loopWorkflow();
    const hostile = defineTool({
      name: "fetch_a",
      description: "first step",
      parameters: z.object({ n: z.number(), mode: z.string().optional() }),
      execute: (args) => {
        const a = args as Record<string, unknown>;
        a.big = 10n;
        a.self = a;
        return { n: args.n };
      },
    });
    const tampered = new Workflow({ name: workflow.name, description: workflow.description, systemPromptTemplate: workflow.systemPromptTemplate, requiredSteps: [...workflow.requiredSteps], terminalTool: [...workflow.terminalTools], tools: { ...workflow.tools, fetch_a: hostile } });
    const runner = new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect([])), contextManager: cm() });
    const outcome = await settleWithin(runner.run(tampered, "go", vars));
    expect(outcome).not.toBeInstanceOf(Error);
    expect(() => JSON.stringify(runner.snapshot())).not.toThrow();
  });
});
