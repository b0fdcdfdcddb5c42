/**
 * Hangs: the wall-clock budget ends a run on time even while a model call or a tool is in
 * flight (and even when that service ignores its signal); per-tool deadlines turn a slow tool
 * into a tool error the model can act on.
 */
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import {
  BudgetExhaustedError,
  defineTool,
  InvalidArgumentError,
  ToolDefinitionError,
  ToolExecutionError,
  Workflow,
  type Message,
} from "../../src/core/index.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../../src/runner.js";
import { call, correctNext, loopWorkflow, PolicyClient, scriptThenCorrect, turnOf, type Policy } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };
const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 });
// Services here never settle (or only when the test lets them, after the run ended): a run that
// ends at all was ended by its deadline, which proves "did not hang" without timing the machine.
const never = <T>() => new Promise<T>(() => undefined);

/** How a run settled: its error, or undefined when it resolved. */
const settled = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

function runner(policy: Policy, options: Partial<WorkflowRunnerOptions> = {}) {
  return new WorkflowRunner({ client: new PolicyClient(policy), contextManager: cm(), ...options });
}

/** loopWorkflow with fetch_a replaced by `execute` (and optional timeoutMs). */
function withFetchA(execute: (args: unknown, ctx: { signal: AbortSignal }) => unknown, timeoutMs?: number) {
  const { workflow } = loopWorkflow();
  const fetchA = defineTool({
    name: "fetch_a",
    description: "first step",
    parameters: z.object({ mode: z.string().optional(), n: z.number().optional() }),
    execute,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  });
  return new Workflow({
    name: workflow.name,
    tools: { ...workflow.tools, fetch_a: fetchA },
    requiredSteps: [...workflow.requiredSteps],
    terminalTool: "finish",
    systemPromptTemplate: workflow.systemPromptTemplate,
  });
}

describe("maxWallClockMs bounds services in flight", () => {
  it("a model call that never resolves: BudgetExhaustedError(wall_clock) on time, its signal aborted", async () => {
    const { workflow } = loopWorkflow();
    let inferSignal: AbortSignal | undefined;
    const r = runner((_m, _t, signal) => ((inferSignal = signal), never()), { maxWallClockMs: 150 });
    const error = await settled(r.run(workflow, "go", vars));
    expect(error).toBeInstanceOf(BudgetExhaustedError);
    expect(error).toMatchObject({ reason: "wall_clock", limit: 150 });
    expect((error as BudgetExhaustedError).used).toBeGreaterThanOrEqual(150);
    expect(inferSignal?.aborted).toBe(true);
    expect(r.lastRunStats?.outcome).toBe("failed");
  });

  it("also when the service ignores its signal entirely", async () => {
    const { workflow } = loopWorkflow();
    const client = new PolicyClient(() => call("fetch_a"));
    // a send that neither resolves nor listens to its signal
    client.send = () => never();
    const r = new WorkflowRunner({ client, contextManager: cm(), maxWallClockMs: 100 });
    const error = await settled(r.run(workflow, "go", vars));
    expect(error).toMatchObject({ code: "FORGE_BUDGET_EXHAUSTED", reason: "wall_clock" });
  });

  it("a tool slower than the budget fails the run at the budget, not when the tool finishes", async () => {
    let toolSignal: AbortSignal | undefined;
    let finishTool: ((value: string) => void) | undefined;
    const wf = withFetchA((_a, ctx) => {
      toolSignal = ctx.signal;
      return new Promise((resolve) => (finishTool = resolve)); // finishes only when the test says so
    });
    const error = await settled(runner(scriptThenCorrect([]), { maxWallClockMs: 100 }).run(wf, "go", vars));
    expect(error).toBeInstanceOf(BudgetExhaustedError);
    expect(finishTool).toBeDefined(); // the tool was in flight, and still is: the budget ended the run
    expect(toolSignal?.aborted).toBe(true);
    finishTool!("late");
  });

  it("a run that finishes inside the budget is unaffected and leaves no timer behind", async () => {
    const { workflow } = loopWorkflow();
    await expect(runner(scriptThenCorrect([]), { maxWallClockMs: 60_000 }).run(workflow, "go", vars)).resolves.toEqual({ done: "all done" });
  });

  it("the injected clock decides: a timer firing early re-arms instead of failing the run", async () => {
    const { workflow } = loopWorkflow();
    let release: (() => void) | undefined;
    let clock = 0;
    let reads = 0;
    let readsWhenAsked = 0;
    const r = runner(
      (messages) => {
        if (turnOf(messages) > 0) return correctNext(messages);
        readsWhenAsked = reads;
        // the real timer fires after ~50 ms; the injected clock says no time has passed
        return new Promise((resolve) => (release = () => resolve(call("fetch_a", { n: 1 }))));
      },
      { maxWallClockMs: 50, now: () => (reads++, clock) },
    );
    const run = r.run(workflow, "go", vars);
    // While the model call hangs, only the budget's timer reads the clock: wait for it to have
    // fired (and re-armed) twice.
    await vi.waitFor(() => expect(release !== undefined && reads >= readsWhenAsked + 2).toBe(true), { timeout: 30_000, interval: 10 });
    clock = 10;
    release!();
    await expect(run).resolves.toEqual({ done: "all done" });
  });
});

describe("tool deadlines", () => {
  it("defineTool({ timeoutMs }): the call fails as a tool error naming the timeout, its signal aborted, and the model recovers", async () => {
    let toolSignal: AbortSignal | undefined;
    let calls = 0;
    const wf = withFetchA((_a, ctx) => {
      toolSignal ??= ctx.signal;
      // first call hangs (ignoring its signal), the retry answers at once
      return calls++ === 0 ? never() : "a";
    }, 40);
    const messages: Message[] = [];
    const r = runner(scriptThenCorrect([]), { onMessage: (m) => messages.push(m) });
    const error = await settled(r.run(wf, "go", vars));
    expect(error).toBeUndefined();
    expect(toolSignal?.aborted).toBe(true);
    const fed = messages.find((m) => m.content.startsWith("[ToolError]"));
    expect(fed?.content).toMatch(/fetch_a.*40 ms deadline/);
    expect(r.lastRunStats?.toolErrors).toBe(1);
  });

  it("a timeout counts against the tool-error budget", async () => {
    const wf = withFetchA(() => never(), 20);
    const error = await runner(scriptThenCorrect([]), { maxToolErrors: 0 })
      .run(wf, "go", vars)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolExecutionError);
    expect((error as ToolExecutionError).lastError).toMatch(/20 ms deadline/);
  });

  it("the runner's toolTimeoutMs applies to tools without their own; a tool's timeoutMs wins", async () => {
    const slow = (ms: number) => () => new Promise((resolve) => setTimeout(() => resolve("ok"), ms).unref());
    // runner default 20 ms, tool takes 60 ms → timeout
    const defaulted = await runner(scriptThenCorrect([]), { toolTimeoutMs: 20, maxToolErrors: 0 })
      .run(withFetchA(slow(60)), "go", vars)
      .catch((e: unknown) => e);
    expect(defaulted).toBeInstanceOf(ToolExecutionError);
    // the tool's own 5 s deadline overrides the runner's 20 ms
    await expect(runner(scriptThenCorrect([]), { toolTimeoutMs: 20 }).run(withFetchA(slow(60), 5_000), "go", vars)).resolves.toEqual({
      done: "all done",
    });
  });

  it("deadlines are validated up front", () => {
    const client = new PolicyClient(scriptThenCorrect([]));
    for (const bad of [0, -1, "5", Number.NaN, 2 ** 31]) {
      expect(() => new WorkflowRunner({ client, contextManager: cm(), toolTimeoutMs: bad as number })).toThrow(InvalidArgumentError);
      expect(() =>
        defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => 1, timeoutMs: bad as number }),
      ).toThrow(ToolDefinitionError);
    }
    expect(defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => 1, timeoutMs: 5 }).timeoutMs).toBe(5);
  });
});
