import { describe, expect, it } from "vitest";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import {
  BudgetExhaustedError,
  MaxIterationsError,
  PrerequisiteError,
  StepEnforcementError,
  ToolCallError,
  ToolExecutionError,
  type Message,
} from "../../src/core/index.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../../src/runner.js";
import { call, calls, loopWorkflow, PolicyClient, scriptThenCorrect, text, type Policy } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };

function setup(policy: Policy, options: Partial<WorkflowRunnerOptions> = {}) {
  const { workflow, log } = loopWorkflow();
  const client = new PolicyClient(policy);
  const messages: Message[] = [];
  const states: string[] = [];
  const runner = new WorkflowRunner({
    client,
    contextManager: new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 }),
    onMessage: (m) => messages.push(m),
    onStateChange: (s) => states.push(s),
    ...options,
  });
  return { workflow, log, client, runner, messages, states, run: () => runner.run(workflow, "go", vars) };
}

const types = (messages: Message[]) => messages.map((m) => `${m.role}:${m.meta.type}`);

describe("WorkflowRunner transitions", () => {
  it("walks inferring → executingTools → done on the happy path, skipping compaction while the history fits", async () => {
    const t = setup(scriptThenCorrect([]));
    await expect(t.run()).resolves.toEqual({ done: "all done" });
    expect(t.states).toEqual([
      "inferring", "executingTools.running",
      "inferring", "executingTools.running",
      "inferring", "executingTools.running",
      "done",
    ]);
    expect(t.log.map((e) => e.tool)).toEqual(["fetch_a", "fetch_b", "finish"]);
    expect(t.runner.lastRunStats).toMatchObject({ outcome: "done", iterations: 3, toolCalls: 3, completedSteps: ["fetch_a", "fetch_b", "finish"] });
  });

  it("runs the compaction service once the history's running total passes the trigger", async () => {
    // trigger 20 tokens: the system prompt and "go" (17) fit, the first tool round does not
    const t = setup(scriptThenCorrect([]), { contextManager: new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000, compactThreshold: 0.0002 }) });
    await expect(t.run()).resolves.toEqual({ done: "all done" });
    expect(t.states).toEqual([
      "inferring", "executingTools.running",
      "compacting.running", "inferring", "executingTools.running",
      "compacting.running", "inferring", "executingTools.running",
      "done",
    ]);
  });

  it("runs the compaction service every iteration under a custom token estimator (it decides)", async () => {
    const estimateTokens = (messages: readonly Message[]) => messages.length;
    const t = setup(scriptThenCorrect([]), { contextManager: new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000, estimateTokens }) });
    await expect(t.run()).resolves.toEqual({ done: "all done" });
    expect(t.states.filter((s) => s === "compacting.running")).toHaveLength(3);
  });

  it("answers bare text with a retry nudge on the user channel, then recovers", async () => {
    const t = setup(scriptThenCorrect([text("I will fetch a first.")]));
    await t.run();
    expect(types(t.messages).slice(0, 2)).toEqual(["assistant:text_response", "user:retry_nudge"]);
    expect(t.messages[0]!.content).toBe("I will fetch a first.");
    expect(t.runner.lastRunStats?.retryNudges).toBe(1);
  });

  it("fails with ToolCallError once consecutive retries exceed maxRetries", async () => {
    const t = setup(() => text("no tools today"), { maxRetries: 2 });
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect(error).toMatchObject({ attempt: 3, rawResponse: "no tools today" });
    expect(t.client.requests).toHaveLength(3);
  });

  it("maxRetries 0 makes the first bare text fatal (ablation no_nudge)", async () => {
    const t = setup(() => text("nope"), { maxRetries: 0 });
    await expect(t.run()).rejects.toBeInstanceOf(ToolCallError);
    expect(t.client.requests).toHaveLength(1);
  });

  it("takes the deprecated maxRetriesPerStep as maxRetries, warning once, and refuses both at once", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const t = setup(() => text("nope"), { maxRetriesPerStep: 0 });
      await expect(t.run()).rejects.toBeInstanceOf(ToolCallError);
      expect(t.client.requests).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => (w as Error & { code?: string }).code)).toContain("FORGE_DEP_MAX_RETRIES_PER_STEP");
    } finally {
      process.off("warning", onWarning);
    }
    expect(() => setup(() => text("nope"), { maxRetries: 1, maxRetriesPerStep: 1 })).toThrow("give maxRetries only: maxRetriesPerStep is its deprecated old name");
  });

  it("rescues a fenced JSON call from text and records the rescue", async () => {
    const t = setup(scriptThenCorrect([text('Sure:\n```json\n{"tool": "fetch_a", "args": {"n": 7}}\n```')]));
    await t.run();
    expect(t.log[0]).toMatchObject({ tool: "fetch_a", args: { mode: "ok", n: 7 } });
    expect(t.runner.lastRunStats?.rescues).toBe(1);
  });

  it("with rescueEnabled false the same text is only a retry", async () => {
    const t = setup(scriptThenCorrect([text('```json\n{"tool": "fetch_a", "args": {"n": 7}}\n```')]), { rescueEnabled: false });
    await t.run();
    expect(t.log[0]).toMatchObject({ args: { n: 1 } });
    expect(t.runner.lastRunStats).toMatchObject({ rescues: 0, retryNudges: 1 });
  });

  it("answers an unknown tool on the tool channel anchored to the call id", async () => {
    const t = setup(scriptThenCorrect([call("fetch_c", {})]));
    await t.run();
    const [assistant, result] = t.messages;
    expect(assistant!.meta.type).toBe("tool_call");
    expect(result).toMatchObject({ role: "tool", toolCallId: assistant!.toolCalls![0]!.callId });
    expect(result!.content).toContain("fetch_c");
    expect(t.log.map((e) => e.tool)).toEqual(["fetch_a", "fetch_b", "finish"]);
  });

  it("rejects schema-invalid args naming the field, and skips the rest of the batch", async () => {
    const t = setup(scriptThenCorrect([calls(["fetch_a", { n: "seven" }], ["extra", {}])]));
    await t.run();
    expect(t.messages[1]!.content).toContain("n");
    expect(t.messages[1]!.content).toMatch(/number/i);
    expect(t.messages[2]!.content).toMatch(/^\[Skipped\]/);
    expect(t.log[0]!.tool).toBe("fetch_a");
  });

  it("rejects non-object args", async () => {
    const t = setup(scriptThenCorrect([call("fetch_a", "n=7")]));
    await t.run();
    expect(t.messages[1]!.content).toMatch(/object/i);
  });

  it("escalates premature terminal calls through tiers 1/2/3, then StepEnforcementError", async () => {
    const t = setup(() => call("finish", { summary: "early" }));
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepEnforcementError);
    expect(error).toMatchObject({ terminalTool: "finish", attempts: 4, pendingSteps: ["fetch_a", "fetch_b"] });
    const nudges = t.messages.filter((m) => m.meta.type === "step_nudge").map((m) => m.content);
    expect(nudges).toHaveLength(3);
    expect(new Set(nudges).size).toBe(3);
    expect(nudges.every((n) => n.startsWith("[StepEnforcementError]"))).toBe(true);
    expect(t.log).toHaveLength(0);
  });

  it("with stepEnforcement false a premature terminal call simply runs (ablation no_steps)", async () => {
    const t = setup(() => call("finish", { summary: "early" }), { stepEnforcement: false });
    await expect(t.run()).resolves.toEqual({ done: "early" });
  });

  it("blocks a call whose prerequisite has not run, then PrerequisiteError when it persists", async () => {
    const t = setup(() => call("fetch_b", { n: 2 }));
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrerequisiteError);
    expect(error).toMatchObject({ toolName: "fetch_b", violations: 3, missingPrereqs: ["fetch_a"] });
    expect(t.messages.filter((m) => m.meta.type === "prerequisite_nudge")[0]!.content).toMatch(/^\[PrereqError\]/);
  });

  it("feeds a tool exception back as [ToolError] and resets the streak on success", async () => {
    const t = setup(scriptThenCorrect([call("fetch_a", { mode: "throw", n: 3 })]));
    await t.run();
    const err = t.messages.find((m) => m.content.startsWith("[ToolError]"));
    expect(err?.content).toContain("fetch_a exploded on n=3");
    expect(t.runner.lastRunStats?.toolErrors).toBe(1);
  });

  it("raises ToolExecutionError when tool errors exceed maxToolErrors", async () => {
    const t = setup(() => call("fetch_a", { mode: "throw", n: 1 }), { maxToolErrors: 1, maxToolRepeat: 10 });
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolExecutionError);
    expect(error).toMatchObject({ toolName: "fetch_a", attempts: 2 });
  });

  it("feeds ToolResolutionError back without counting it or recording the step", async () => {
    const t = setup(scriptThenCorrect([call("fetch_a", { mode: "resolve", n: 9 })]), { maxToolErrors: 0 });
    await expect(t.run()).resolves.toEqual({ done: "all done" });
    expect(t.messages[1]!.content).toMatch(/^\[ToolResolutionError\]/);
    expect(t.runner.lastRunStats).toMatchObject({ toolErrors: 0, completedSteps: ["fetch_a", "fetch_b", "finish"] });
  });

  it("executes a parallel batch: one TOOL_CALL message, then one result per call", async () => {
    const t = setup(scriptThenCorrect([calls(["fetch_a", { n: 1 }], ["extra", { n: 5 }])]));
    await t.run();
    expect(types(t.messages).slice(0, 3)).toEqual(["assistant:tool_call", "tool:tool_result", "tool:tool_result"]);
    expect(t.messages[0]!.toolCalls).toHaveLength(2);
    expect(t.messages.slice(1, 3).map((m) => m.toolCallId)).toEqual(t.messages[0]!.toolCalls!.map((c) => c.callId));
  });

  it("breaks a loop of identical calls after maxToolRepeat", async () => {
    const t = setup(scriptThenCorrect([call("extra", { n: 1 }), call("extra", { n: 1 }), call("extra", { n: 1 }), call("extra", { n: 1 })]));
    await t.run();
    expect(t.log.filter((e) => e.tool === "extra")).toHaveLength(3);
    const loopBreak = t.messages.find((m) => m.content.startsWith("[LoopBreak]"));
    expect(loopBreak?.content).toContain("has already run 3 time(s)");
    expect(t.runner.lastRunStats?.loopBreaks).toBe(1);
  });

  it("fails with MaxIterationsError carrying completed and pending steps", async () => {
    const t = setup(scriptThenCorrect([call("fetch_a", { n: 1 }), call("extra", { n: 1 }), call("extra", { n: 2 })]), { maxIterations: 3 });
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaxIterationsError);
    expect(error).toMatchObject({ iterations: 3, completedSteps: ["fetch_a", "extra"], pendingSteps: ["fetch_b"] });
  });

  it("fails with BudgetExhaustedError(token_budget) when total tokens run out", async () => {
    const t = setup(scriptThenCorrect([]), { maxTotalTokens: 50 });
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExhaustedError);
    expect(error).toMatchObject({ reason: "token_budget", limit: 50 });
  });

  it("fails with BudgetExhaustedError(wall_clock) on an injected clock", async () => {
    let clock = 0;
    const t = setup(scriptThenCorrect([]), { maxWallClockMs: 1000, now: () => (clock += 400) });
    const error = await t.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExhaustedError);
    expect(error).toMatchObject({ reason: "wall_clock", limit: 1000 });
  });

  it("captures reasoning as REASONING messages", async () => {
    const t = setup(scriptThenCorrect([{ type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: {} }], reasoning: "a comes first" }]));
    await t.run();
    expect(types(t.messages).slice(0, 2)).toEqual(["assistant:reasoning", "assistant:tool_call"]);
  });
});
