import { describe, expect, it } from "vitest";
import { Guardrails, type ExecutedResult, type GuardrailDecision } from "../../src/runner/guardrails.js";
import { callKey } from "../../src/guardrails/loop-break.js";
import {
  ForgeError,
  InvalidArgumentError,
  PrerequisiteError,
  StepEnforcementError,
  ToolCallError,
  ToolExecutionError,
} from "../../src/core/errors.js";
import type { LLMResponse, ToolCall } from "../../src/core/llm.js";
import { fenced, tools } from "./fixtures.js";

const text = (content: string): LLMResponse => ({ type: "text", content });
const calls = (...toolCalls: ToolCall[]): LLMResponse => ({ type: "tool_calls", toolCalls });
const weather = (city = "Paris"): ToolCall => ({ tool: "get_weather", args: { city } });
const answer: ToolCall = { tool: "respond", args: { message: "done" } };

function fatalError(d: GuardrailDecision): ForgeError {
  if (d.action !== "fatal") throw new Error(`expected fatal, got ${d.action}`);
  return d.error;
}

describe("Guardrails options", () => {
  it("validates options up front", () => {
    expect(() => new Guardrails({})).toThrow(InvalidArgumentError);
    expect(() => new Guardrails({ tools, toolNames: ["a"] })).toThrow(/exactly one/);
    expect(() => new Guardrails({ toolNames: [] })).toThrow(/at least one/);
    expect(() => new Guardrails({ toolNames: ["a"], requiredSteps: ["b"] })).toThrow(/requiredSteps/);
    expect(() => new Guardrails({ toolNames: ["a"], terminalTools: "b" })).toThrow(/terminalTools/);
    expect(() => new Guardrails({ toolNames: ["a"], requiredSteps: ["a"], terminalTools: ["a"] })).toThrow(/required step/);
    expect(() => new Guardrails({ toolNames: ["a"], maxToolRepeat: -1 })).toThrow(/maxToolRepeat/);
  });
});

describe("Guardrails.check: retries", () => {
  it("bare text → retry nudge on the user channel; fatal ToolCallError at max+1", () => {
    const g = new Guardrails({ tools, maxRetries: 2 });
    for (let i = 1; i <= 2; i++) {
      const d = g.check(text("hmm"));
      expect(d).toMatchObject({ action: "retry", nudge: { role: "user", kind: "retry" } });
      expect(g.counters.retries).toBe(i);
    }
    const err = fatalError(g.check(text("still text")));
    expect(err).toBeInstanceOf(ToolCallError);
    expect(err.data).toMatchObject({ rawResponse: "still text", attempt: 3 });
  });

  it("maxRetries 0: the first bare-text response is fatal", () => {
    const g = new Guardrails({ toolNames: ["respond"], maxRetries: 0 });
    expect(fatalError(g.check(text("hi")))).toBeInstanceOf(ToolCallError);
  });

  it("a valid batch resets retries; rescued text counts as valid", () => {
    const g = new Guardrails({ tools, maxRetries: 1 });
    g.check(text("hmm"));
    expect(g.check(text(fenced("get_weather", { city: "Rome" })))).toEqual({
      action: "execute",
      toolCalls: [{ tool: "get_weather", args: { city: "Rome", unit: "C" } }],
    });
    expect(g.counters.retries).toBe(0);
    g.record([{ tool: "get_weather", ok: true }]);
    expect(g.check(text("hmm")).action).toBe("retry");
  });
});

describe("Guardrails.check: rejected batches", () => {
  it("unknown tool → tool_error per call, drawing on retries", () => {
    const g = new Guardrails({ tools, maxRetries: 1 });
    const d = g.check(calls(weather(), { tool: "get_forecast", args: {} }));
    if (d.action !== "tool_error") throw new Error(d.action);
    expect(d.toolCalls).toHaveLength(2);
    expect(d.results.map((r) => r.content.slice(0, 13))).toEqual(["[Skipped] \"ge", "[UnknownTool]"]);
    expect(g.counters).toMatchObject({ retries: 1, toolErrors: 0 });
    const err = fatalError(g.check(calls({ tool: "x", args: {} })));
    expect(err).toBeInstanceOf(ToolCallError);
    expect(err.data.lastError).toMatch(/^\[UnknownTool\]/);
  });

  it("invalid args → tool_error naming the field, drawing on tool errors", () => {
    const g = new Guardrails({ tools, maxToolErrors: 1 });
    const d = g.check(calls({ tool: "get_weather", args: { city: 1 } }));
    expect(d.action === "tool_error" && d.results[0]?.content).toMatch(/- city:/);
    expect(g.counters).toMatchObject({ retries: 0, toolErrors: 1 });
    const err = fatalError(g.check(calls({ tool: "get_weather", args: "nope" })));
    expect(err).toBeInstanceOf(ToolExecutionError);
    expect(err.data).toMatchObject({ toolName: "get_weather", attempts: 2 });
  });
});

describe("Guardrails.check: retry reset by known-tool batches", () => {
  it("a batch of known tools with bad args resets retries (seed 000 3d), like the workflow machine", () => {
    const g = new Guardrails({ tools, maxRetries: 1, maxToolErrors: 5 });
    expect(g.check(text("hmm")).action).toBe("retry");
    expect(g.check(calls({ tool: "get_weather", args: { city: 1 } })).action).toBe("tool_error");
    expect(g.counters).toMatchObject({ retries: 0, toolErrors: 1 });
    expect(g.check(text("hmm again")).action).toBe("retry");
  });
});

describe("Guardrails.check: step enforcement", () => {
  it("premature terminal: tiers 1,2,3 then StepEnforcementError on the 4th", () => {
    const g = new Guardrails({ tools, requiredSteps: ["get_weather"], terminalTools: "respond" });
    const tiers = [1, 2, 3].map(() => {
      const d = g.check(calls(answer));
      if (d.action !== "step_blocked") throw new Error(d.action);
      expect(d.kind).toBe("step");
      expect(d.results[0]?.content).toMatch(/^\[StepEnforcementError\].*"get_weather"/);
      return d.tier;
    });
    expect(tiers).toEqual([1, 2, 3]);
    const err = fatalError(g.check(calls(answer)));
    expect(err).toBeInstanceOf(StepEnforcementError);
    expect(err.data).toEqual({ terminalTool: "respond", attempts: 4, pendingSteps: ["get_weather"] });
  });

  it("a fully successful batch resets the premature counter", () => {
    const g = new Guardrails({ tools, requiredSteps: ["get_weather"], terminalTools: "respond" });
    g.check(calls(answer));
    g.check(calls(answer));
    expect(g.check(calls({ tool: "read_file", args: { path: "x" } })).action).toBe("execute");
    g.record([{ tool: "read_file", args: { path: "x" }, ok: true }]);
    expect(g.counters.premature).toBe(0);
    const d = g.check(calls(answer));
    expect(d.action === "step_blocked" && d.tier).toBe(1);
  });

  it("prerequisites (arg-matched): blocked, then PrerequisiteError after maxPrereqViolations", () => {
    const g = new Guardrails({ tools, maxPrereqViolations: 1 });
    const edit: ToolCall = { tool: "edit_file", args: { path: "a.txt", text: "hi" } };
    const d = g.check(calls({ tool: "read_file", args: { path: "a.txt" } }, edit));
    if (d.action !== "step_blocked") throw new Error(d.action);
    expect(d.kind).toBe("prerequisite");
    expect(d.results[0]?.content).toMatch(/^\[Skipped\]/);
    expect(d.results[1]?.content).toMatch(/^\[PrereqError\].*read_file\(path="a.txt"\)/);
    expect(g.check(calls({ tool: "read_file", args: { path: "b.txt" } })).action).toBe("execute");
    g.record([{ tool: "read_file", args: { path: "b.txt" }, ok: false, error: new Error("disk") }]);
    const err = fatalError(g.check(calls(edit)));
    expect(err).toBeInstanceOf(PrerequisiteError);
    expect(err.data).toEqual({ toolName: "edit_file", violations: 2, missingPrereqs: ['read_file(path="a.txt")'] });
  });

  it("prerequisite met by a matching earlier read", () => {
    const g = new Guardrails({ tools });
    g.check(calls({ tool: "read_file", args: { path: "a.txt" } }));
    g.record([{ tool: "read_file", args: { path: "a.txt" }, ok: true }]);
    expect(g.check(calls({ tool: "edit_file", args: { path: "a.txt", text: "x" } })).action).toBe("execute");
  });
});

describe("Guardrails.check: loop break", () => {
  it("the (max+1)th identical call gets [LoopBreak] instead of executing; key order is ignored", () => {
    const g = new Guardrails({ tools, maxToolRepeat: 2, maxToolErrors: 5 });
    for (const args of [{ city: "Oslo", unit: "C" }, { unit: "C", city: "Oslo" }]) {
      const d = g.check(calls({ tool: "get_weather", args }));
      expect(d.action).toBe("execute");
      g.record([{ tool: "get_weather", args, ok: true }]);
    }
    expect(g.callCounts).toEqual({ [callKey("get_weather", { city: "Oslo", unit: "C" })]: 2 });
    const d = g.check(calls(weather("Bergen"), { tool: "get_weather", args: { city: "Oslo" } }));
    if (d.action !== "tool_error") throw new Error(d.action);
    expect(d.results[0]?.content).toMatch(/^\[Skipped\]/);
    expect(d.results[1]?.content).toMatch(/^\[LoopBreak\].*2 time/);
    expect(g.counters.toolErrors).toBe(1);
    expect(g.check(calls(weather("Bergen"))).action).toBe("execute");
  });

  it("a repeated loop break exhausts the tool-error budget", () => {
    const g = new Guardrails({ toolNames: ["ping"], maxToolRepeat: 0, maxToolErrors: 0 });
    expect(fatalError(g.check(calls({ tool: "ping", args: {} })))).toBeInstanceOf(ToolExecutionError);
  });
});

describe("Guardrails.record", () => {
  /** check() then record(): the facade steps the machine, so results follow an execute decision. */
  function run(g: Guardrails, batch: ToolCall[], results: Omit<ExecutedResult, "tool">[]) {
    const d = g.check(calls(...batch));
    if (d.action !== "execute") throw new Error(`expected execute, got ${d.action}`);
    return g.record(results.map((r, i) => ({ tool: batch[i]!.tool, ...r })));
  }

  it("terminal success ⇒ done; steps are recorded with the decision's (validated) arguments", () => {
    const g = new Guardrails({ tools, requiredSteps: ["get_weather"], terminalTools: ["respond"] });
    expect(run(g, [weather("A")], [{ ok: true }])).toEqual({ done: false });
    expect(g.pending()).toEqual([]);
    expect(run(g, [answer], [{ ok: true }])).toEqual({ done: true });
    expect(g.completedSteps).toEqual([{ tool: "get_weather", args: { city: "A", unit: "C" } }, { tool: "respond", args: { message: "done" } }]);
    expect(g.summaryHint()).toBe("[Steps completed: get_weather, respond]");
    expect(() => g.check(calls(answer))).toThrow(/terminal tool already succeeded/);
  });

  it("resolution errors neither count nor record the step", () => {
    const g = new Guardrails({ tools, maxToolErrors: 0, requiredSteps: ["get_weather"], terminalTools: "respond" });
    expect(run(g, [weather()], [{ ok: false, resolution: true }])).toEqual({ done: false });
    expect(g.counters.toolErrors).toBe(0);
    expect(g.completedSteps).toEqual([]);
  });

  it("tool errors exhaust at max+1 with the runner's ToolExecutionError; then the facade refuses more", () => {
    const g = new Guardrails({ tools, maxToolErrors: 1 });
    const boom = new Error("backend down");
    expect(run(g, [weather()], [{ ok: false, error: boom }])).toEqual({ done: false });
    const second = run(g, [weather("B"), answer], [{ ok: false, error: boom }, { ok: true }]);
    expect(second.done).toBe(false);
    expect(second.fatal).toBeInstanceOf(ToolExecutionError);
    expect(second.fatal?.data).toMatchObject({ toolName: "get_weather", attempts: 2 });
    expect(String(second.fatal?.data.lastError)).toContain("backend down");
    expect(() => g.check(calls(answer))).toThrow(/already gave up \(FORGE_TOOL_EXECUTION\)/);
  });

  it("a batch with an error does not reset premature or prereq counters; a clean one does", () => {
    const g = new Guardrails({ tools, requiredSteps: ["get_weather"], terminalTools: "respond", maxToolErrors: 9 });
    g.check(calls(answer));
    run(g, [{ tool: "read_file", args: { path: "x" } }], [{ ok: false }]);
    expect(g.counters).toMatchObject({ premature: 1, toolErrors: 1 });
    run(g, [{ tool: "read_file", args: { path: "y" } }], [{ ok: true }]);
    expect(g.counters).toMatchObject({ premature: 0, toolErrors: 0 });
  });

  it("refuses results out of turn or not matching the batch, and check() before the batch is recorded", () => {
    const g = new Guardrails({ tools });
    expect(() => g.record([{ tool: "get_weather", ok: true }])).toThrow(InvalidArgumentError);
    g.check(calls(weather(), answer));
    expect(() => g.check(calls(answer))).toThrow(/record\(\) the results of the last execute decision first/);
    expect(() => g.record([{ tool: "get_weather", ok: true }])).toThrow(/one result per call .*get_weather, respond/);
    expect(() => g.record([{ tool: "respond", ok: true }, { tool: "get_weather", ok: true }])).toThrow(InvalidArgumentError);
    expect(g.record([{ tool: "get_weather", ok: true }, { tool: "respond", ok: true }])).toEqual({ done: false });
  });

  it("approvals and human input are the foreign loop's own: such a tool is executed, not held", () => {
    const g = new Guardrails({ tools: { ...tools, get_weather: { ...tools.get_weather, needsApproval: true } } });
    expect(g.check(calls(weather())).action).toBe("execute");
  });

  it("more calls than maxToolCallsPerResponse: a retry nudge, as in the runner", () => {
    const g = new Guardrails({ tools, maxToolCallsPerResponse: 1 });
    expect(g.check(calls(weather("A"), weather("B")))).toMatchObject({ action: "retry", nudge: { role: "user" } });
    expect(g.counters.retries).toBe(1);
  });
});

describe("synthetic respond tool", () => {
  it('"respond" in toolNames passes validation and ends the workflow', () => {
    const g = new Guardrails({ toolNames: ["search", "respond"], terminalTools: "respond" });
    const d = g.check(calls({ tool: "respond", args: { message: "Hello!" } }));
    expect(d).toEqual({ action: "execute", toolCalls: [{ tool: "respond", args: { message: "Hello!" } }] });
    expect(g.record([{ tool: "respond", args: { message: "Hello!" }, ok: true }]).done).toBe(true);
  });
});
