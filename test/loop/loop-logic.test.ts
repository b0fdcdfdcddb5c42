/**
 * The machine's guards, actions and failure builders are pure functions of the JSON context;
 * these tests drive them directly, without an actor.
 */
import { describe, expect, it } from "vitest";
import { createMessage, MessageType, ToolResultError, ToolTimeoutError, type LLMResponse } from "../../src/core/index.js";
import { validateResponse } from "../../src/guardrails/response-validator.js";
import * as act from "../../src/loop/actions.js";
import { callCountEntries, callCountsFrom } from "../../src/loop/call-counts.js";
import { createInitialContext, MACHINE_VERSION, workflowInputOf, type WorkflowContext } from "../../src/loop/context.js";
import * as fail from "../../src/loop/failures.js";
import * as is from "../../src/loop/guards.js";
import { runStatsFrom } from "../../src/loop/run-stats.js";
import { toolOutput } from "../../src/loop/tool-output.js";
import { loopWorkflow } from "../support/loop-fixtures.js";

const { workflow } = loopWorkflow();

function ctx(overrides: Partial<WorkflowContext> = {}): WorkflowContext {
  const base = createInitialContext({
    runId: "run",
    workflow: workflow.name,
    messages: [createMessage("system", "sys", MessageType.SYSTEM_PROMPT), createMessage("user", "go", MessageType.USER_INPUT)],
    toolNames: workflow.toolNames,
    terminalTools: ["finish"],
    requiredSteps: ["fetch_a", "fetch_b"],
    prerequisites: { fetch_a: [], fetch_b: ["fetch_a"], extra: [], finish: [] },
    budget: { maxIterations: 5, maxRetries: 2, maxToolErrors: 1, maxPremature: 3, maxPrereq: 2, maxToolRepeat: 2 },
    switches: { rescueEnabled: true, stepEnforcement: true },
    startedAt: 1000,
    compactAt: 1_000_000,
  });
  return { ...base, iteration: 1, ...overrides };
}

/** The context right after the model answered `response`. */
function answered(response: LLMResponse, overrides: Partial<WorkflowContext> = {}): WorkflowContext {
  const c = ctx(overrides);
  return { ...c, lastResponse: response, validation: validateResponse(response, { tools: workflow.tools, rescueEnabled: c.run.switches.rescueEnabled }) };
}
const callOf = (tool: string, args: unknown = {}): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args }] });

describe("initial context", () => {
  it("gives back the input it was made from (workflowInputOf), with or without a parent and redaction", () => {
    for (const run of [{}, { parent: { runId: "p", callId: "c1" }, redact: { fetch_a: ["token"] } }]) {
      const c = ctx({ run: { ...ctx().run, ...run } });
      const again = createInitialContext(workflowInputOf(c));
      expect(again.run).toEqual(c.run);
      expect([again.messages, again.steps.required]).toEqual([c.messages, c.steps.required]);
    }
  });

  it("is plain JSON and carries the machine version", () => {
    const c = ctx();
    expect(JSON.parse(JSON.stringify(c))).toEqual(c);
    expect(c.machineVersion).toBe(MACHINE_VERSION);
    expect(c.counters).toEqual({ retries: 0, toolErrors: 0, premature: 0, prereq: 0 });
  });
});

describe("guards", () => {
  it("budget guards", () => {
    expect(is.isIterationBudgetExhausted(ctx({ iteration: 5 }))).toBe(true);
    expect(is.isIterationBudgetExhausted(ctx({ iteration: 4 }))).toBe(false);
    const tokens = ctx({ run: { ...ctx().run, budget: { ...ctx().run.budget, maxTotalTokens: 100 } }, usage: { inputTokens: 60, outputTokens: 40 } });
    expect(is.isTokenBudgetExhausted(tokens)).toBe(true);
    expect(is.isTokenBudgetExhausted(ctx({ usage: { inputTokens: 10 ** 9, outputTokens: 0 } }))).toBe(false);
    const clock = ctx({ run: { ...ctx().run, budget: { ...ctx().run.budget, maxWallClockMs: 500 } } });
    expect(is.isWallClockExhausted({ ...clock, now: 1499 })).toBe(false);
    expect(is.isWallClockExhausted({ ...clock, now: 1500 })).toBe(true);
  });

  it("validation guards and their budgets", () => {
    const text = answered({ type: "text", content: "hmm" });
    expect(is.needsRetry(text)).toBe(true);
    expect(is.isRetryBudgetExhausted(text)).toBe(false);
    expect(is.isRetryBudgetExhausted({ ...text, counters: { ...text.counters, retries: 2 } })).toBe(true);
    const unknown = answered(callOf("nope"));
    // The two rejection guards split rejected batches by budget: each batch matches exactly one.
    expect([is.isRejectedOnRetries(unknown), is.isRejectedOnToolErrors(unknown)]).toEqual([true, false]);
    const badArgs = answered(callOf("fetch_a", { n: "x" }));
    expect([is.isRejectedOnRetries(badArgs), is.isRejectedOnToolErrors(badArgs)]).toEqual([false, true]);
    expect(is.isNextToolErrorFatal({ ...badArgs, counters: { ...badArgs.counters, toolErrors: 1 } })).toBe(true);
  });

  it("step, prerequisite and loop-break guards", () => {
    const early = answered(callOf("finish", { summary: "x" }));
    expect(is.hasPrematureTerminal(early)).toBe(true);
    expect(is.hasPrematureTerminal({ ...early, run: { ...early.run, switches: { ...early.run.switches, stepEnforcement: false } } })).toBe(false);
    expect(is.isPrematureBudgetExhausted({ ...early, counters: { ...early.counters, premature: 3 } })).toBe(true);
    const b = answered(callOf("fetch_b"));
    expect(is.hasPrereqViolation(b)).toBe(true);
    expect(is.hasPrereqViolation({ ...b, steps: { ...b.steps, completed: [{ tool: "fetch_a", args: {} }] } })).toBe(false);
    const repeat = answered(callOf("extra", { n: 1 }));
    expect(is.hasRepeatViolation(repeat)).toBe(false);
    expect(is.hasRepeatViolation({ ...repeat, callCounts: callCountsFrom([[`extra:${JSON.stringify({ mode: "ok", n: 1 })}`, 2]]) })).toBe(true);
  });
});

describe("actions", () => {
  it("recordRetry keeps the text and nudges on the user channel", () => {
    const c = answered({ type: "text", content: "let me think", reasoning: "r" });
    const { patch, appended } = act.recordRetry(c);
    expect(appended.map((m) => `${m.role}:${m.meta.type}`)).toEqual(["assistant:reasoning", "assistant:text_response", "user:retry_nudge"]);
    expect(appended.every((m) => m.meta.stepIndex === 1)).toBe(true);
    expect(patch.counters?.retries).toBe(1);
    expect(patch.messages).toHaveLength(c.messages.length + 3);
  });

  it("recordRejectedBatch answers each call id, charging retries or tool errors", () => {
    const unknown = act.recordRejectedBatch(answered(callOf("nope")));
    expect(unknown.appended[1]).toMatchObject({ role: "tool", toolCallId: unknown.appended[0]!.toolCalls![0]!.callId });
    expect(unknown.patch.counters).toMatchObject({ retries: 1, toolErrors: 0 });
    const bad = act.recordRejectedBatch(answered(callOf("fetch_a", { n: "x" })));
    expect(bad.patch.counters).toMatchObject({ retries: 0, toolErrors: 1 });
  });

  it("recordPrematureTerminal escalates by tier; recordPrereqViolation blocks the batch", () => {
    const first = act.recordPrematureTerminal(answered(callOf("finish", { summary: "x" })));
    const third = act.recordPrematureTerminal(answered(callOf("finish", { summary: "x" }), { counters: { retries: 0, toolErrors: 0, premature: 2, prereq: 0 } }));
    expect(first.appended.at(-1)!.content).not.toBe(third.appended.at(-1)!.content);
    expect(first.appended.at(-1)!.meta.type).toBe("step_nudge");
    const prereq = act.recordPrereqViolation(answered({ type: "tool_calls", toolCalls: [{ tool: "extra", args: {} }, { tool: "fetch_b", args: {} }] }));
    expect(prereq.appended.slice(1).map((m) => m.content.slice(0, 11))).toEqual(["[Skipped] \"", "[PrereqErro"]);
    expect(prereq.patch.counters?.prereq).toBe(1);
  });

  it("startBatch plans every call and counts it for loop-break; commit records steps and the terminal", () => {
    const c = answered({ type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: {} }, { tool: "finish", args: { summary: "s" } }] }, {
      steps: { required: [], completed: [], completedTools: [] },
    });
    const started = act.startBatch(c);
    expect(started.patch.batch?.calls.map((p) => p.tool)).toEqual(["fetch_a", "finish"]);
    expect(callCountEntries(started.patch.callCounts!).map(([, n]) => n)).toEqual([1, 1]);
    let state: WorkflowContext = { ...c, ...started.patch };
    expect(act.nextCall(state).index).toBe(0);
    state = { ...state, ...act.commitToolOutcome(state, act.outcomeFromOutput(toolOutput("fetch_a", { ok: 1 }, false))).patch };
    // The service's input for the next call, its key made of run id, iteration and index.
    const next = act.nextToolInput(state);
    expect(next).toEqual({ runId: state.run.id, tool: "finish", args: { summary: "s" }, callId: state.batch!.calls[1]!.callId, index: 1, iteration: state.iteration, idempotencyKey: `${state.run.id}:${state.iteration}:1` });
    expect(act.idempotencyKey("r", 3, 1)).toBe("r:3:1");
    state = { ...state, ...act.commitToolOutcome(state, act.outcomeFromOutput(toolOutput("finish", "final", true))).patch };
    expect(is.isBatchComplete(state)).toBe(true);
    expect(state.steps.completed.map((s) => s.tool)).toEqual(["fetch_a", "finish"]);
    expect(state.terminal).toEqual({ tool: "finish", args: { summary: "s" }, result: "final" });
    expect(state.messages.at(-2)!.content).toBe('{"ok":1}');
  });

  it("outcomeFromError separates ToolResolutionError from counted errors; finishBatch settles counters", async () => {
    const { ToolResolutionError } = await import("../../src/core/index.js");
    expect(act.outcomeFromError("t", new ToolResolutionError("no row")).status).toBe("resolution");
    expect(act.outcomeFromError("t", new Error("boom"))).toMatchObject({ status: "error", content: expect.stringContaining("boom") });
    const base = ctx({ counters: { retries: 0, toolErrors: 1, premature: 2, prereq: 1 } });
    const withBatch = (statuses: ("ok" | "error" | "resolution")[]) => ({
      ...base,
      batch: { calls: [], done: statuses.map((status, index) => ({ index, tool: "t", callId: "c", status, content: "" })) },
    });
    expect(act.finishBatch(withBatch(["ok"])).patch.counters).toEqual({ retries: 0, toolErrors: 0, premature: 0, prereq: 0 });
    expect(act.finishBatch(withBatch(["ok", "error"])).patch.counters).toMatchObject({ toolErrors: 2, premature: 2 });
    expect(act.finishBatch(withBatch(["resolution"])).patch.counters).toEqual(base.counters);
    expect(toolOutput("t", undefined, false)).toEqual({ content: "" });
  });

  it("call ids are stable, 9 characters, and distinct within a run", () => {
    const ids = new Set<string>();
    for (let it = 0; it < 50; it++) for (let i = 0; i < 4; i++) ids.add(act.makeCallId("r", it, i));
    expect(ids.size).toBe(200);
    expect([...ids].every((id) => /^[0-9a-z]{9}$/.test(id))).toBe(true);
    expect(act.makeCallId("r", 3, 1)).toBe(act.makeCallId("r", 3, 1));
  });
});

describe("failures", () => {
  it("each builder names the budget that ran out", () => {
    const text = answered({ type: "text", content: "nope" }, { counters: { retries: 2, toolErrors: 0, premature: 0, prereq: 0 } });
    expect(fail.retriesExhausted(text)).toMatchObject({ code: "FORGE_TOOL_CALL", origin: "loop", data: { attempt: 3, rawResponse: "nope" } });
    expect(fail.prematureExhausted(answered(callOf("finish", { summary: "x" })))).toMatchObject({
      code: "FORGE_STEP_ENFORCEMENT",
      data: { terminalTool: "finish", pendingSteps: ["fetch_a", "fetch_b"] },
    });
    expect(fail.prereqExhausted(answered(callOf("fetch_b")))).toMatchObject({ code: "FORGE_PREREQUISITE", data: { toolName: "fetch_b" } });
    expect(fail.iterationsExhausted(ctx({ iteration: 5 }))).toMatchObject({ code: "FORGE_MAX_ITERATIONS", data: { pendingSteps: ["fetch_a", "fetch_b"] } });
    expect(fail.budgetExhausted(ctx({ run: { ...ctx().run, budget: { ...ctx().run.budget, maxWallClockMs: 10 } }, now: 1020 }), "wall_clock")).toMatchObject({
      code: "FORGE_BUDGET_EXHAUSTED",
      data: { reason: "wall_clock", used: 20, limit: 10 },
    });
    expect(fail.cancelled(ctx(), "stop")).toMatchObject({ code: "FORGE_WORKFLOW_CANCELLED", data: { reason: "stop" } });
    expect(fail.serviceFailed("infer", new Error("x"))).toMatchObject({ origin: "infer", message: "x" });
    expect(fail.toolErrorsExhausted(answered(callOf("fetch_a", { n: "x" })))).toMatchObject({ code: "FORGE_TOOL_EXECUTION", data: { toolName: "fetch_a" } });
  });

  it("run stats summarise the final context", () => {
    const c = ctx({ iteration: 3, steps: { required: [], completed: [{ tool: "a", args: {} }, { tool: "a", args: { x: 1 } }], completedTools: ["a"] } });
    expect(runStatsFrom(c, "done", 1500)).toMatchObject({ outcome: "done", iterations: 3, completedSteps: ["a"], elapsedMs: 500 });
    expect(runStatsFrom(c, "failed", 1000).outcome).toBe("failed");
  });
});

describe("hardening guards and failures", () => {
  it("isUnencodableTerminalResult: only a terminal tool's unserializable result ends the run", () => {
    expect(is.isUnencodableTerminalResult(new ToolResultError("finish", "BigInt", true))).toBe(true);
    expect(is.isUnencodableTerminalResult(new ToolResultError("fetch_a", "BigInt", false))).toBe(false);
    expect(is.isUnencodableTerminalResult(new ToolTimeoutError("fetch_a", 10))).toBe(false);
    expect(is.isUnencodableTerminalResult(new Error("x"))).toBe(false);
    expect(is.isUnencodableTerminalResult({ code: "FORGE_TOOL_RESULT", terminal: true })).toBe(false);
  });

  it("wallClockExhaustedAt reports the time the runner's timer saw", () => {
    const c = ctx({ run: { ...ctx().run, budget: { ...ctx().run.budget, maxWallClockMs: 500 } } });
    expect(fail.wallClockExhaustedAt(c, 1750)).toMatchObject({ code: "FORGE_BUDGET_EXHAUSTED", origin: "loop", data: { reason: "wall_clock", used: 750, limit: 500 } });
  });

  it("terminalResultFailed keeps the typed error as loop JSON", () => {
    expect(fail.terminalResultFailed(new ToolResultError("finish", "BigInt", true))).toMatchObject({ code: "FORGE_TOOL_RESULT", origin: "loop", data: { toolName: "finish" } });
  });
});
