import { describe, expect, it } from "vitest";
import {
  argsTooDeepNudge,
  batchSkippedMessage,
  invalidArgsMessage,
  isToolErrorContent,
  loopBreakMessage,
  nonObjectArgsMessage,
  prerequisiteMessage,
  retryNudge,
  stepNudgeMessage,
  toolErrorMessage,
  toolResolutionMessage,
  tooManyCallsNudge,
  unknownToolMessage,
} from "../../src/guardrails/nudges.js";
import { blockedBatchResults } from "../../src/guardrails/blocked-batch.js";
import { ToolResolutionError } from "../../src/core/errors.js";

describe("nudges", () => {
  it("retryNudge is a user-channel message listing the tools", () => {
    const nudge = retryNudge("It is sunny.", ["get_weather", "respond"]);
    expect(nudge).toMatchObject({ role: "user", kind: "retry", tier: 0 });
    expect(nudge.content).toContain("plain text");
    expect(nudge.content).toContain('"get_weather", "respond"');
    expect(isToolErrorContent(nudge.content)).toBe(false);
    expect(retryNudge("  ", ["a"]).content).toContain("no tool call");
  });

  it("each tool-channel message starts with its marker", () => {
    const cases: [string, string][] = [
      [unknownToolMessage("x", ["a", "b"]), "[UnknownTool]"],
      [invalidArgsMessage("a", [{ path: "city", message: "expected string" }]), "[InvalidArguments]"],
      [nonObjectArgsMessage("a", 3), "[InvalidArguments]"],
      [stepNudgeMessage("answer", ["s"], 1), "[StepEnforcementError]"],
      [prerequisiteMessage("edit", ["read"]), "[PrereqError]"],
      [loopBreakMessage("s", 3), "[LoopBreak]"],
      [toolErrorMessage("s", new Error("boom")), "[ToolError]"],
      [toolResolutionMessage("s", new ToolResolutionError("nothing")), "[ToolResolutionError]"],
      [batchSkippedMessage("s"), "[Skipped]"],
    ];
    for (const [content, marker] of cases) {
      expect(content.startsWith(marker)).toBe(true);
      expect(isToolErrorContent(content)).toBe(true);
    }
    expect(isToolErrorContent("ok: 72F")).toBe(false);
    expect(isToolErrorContent("see [ToolError] later")).toBe(false);
  });

  it("unknownToolMessage names the tool and lists available ones", () => {
    const m = unknownToolMessage("get_forecast", ["get_weather", "respond"]);
    expect(m).toContain('"get_forecast"');
    expect(m).toContain('"get_weather", "respond"');
  });

  it("invalidArgsMessage names each field and its problem", () => {
    const m = invalidArgsMessage("book", [
      { path: "city", message: "expected string, received number" },
      { path: "nights", message: "too small" },
    ]);
    expect(m).toContain("- city: expected string, received number");
    expect(m).toContain("- nights: too small");
    expect(m).toContain('"book"');
  });

  it("nonObjectArgsMessage says a JSON object is required and what was given", () => {
    expect(nonObjectArgsMessage("a", [1])).toMatch(/must be a JSON object.*an array/);
    expect(nonObjectArgsMessage("a", null)).toContain("got null");
    expect(nonObjectArgsMessage("a", "x")).toContain("a string");
    expect(nonObjectArgsMessage("a", 4)).toContain("a number");
  });

  it("step nudges escalate per tier and name the next pending step", () => {
    const [t1, t2, t3] = ([1, 2, 3] as const).map((t) => stepNudgeMessage("answer", ["search", "rank"], t));
    for (const m of [t1, t2, t3]) {
      expect(m).toContain('"answer"');
      expect(m).toContain('"search"');
      expect(m).toContain('"rank"');
    }
    expect(new Set([t1, t2, t3]).size).toBe(3);
    expect(t2).toMatch(/Blocked again/);
    expect(t3).toMatch(/Last warning/);
    expect(t3).toMatch(/Call "search" now/);
  });

  it("toolErrorMessage and toolResolutionMessage are '<marker> name: message'", () => {
    expect(toolErrorMessage("search", new Error("timeout"))).toBe("[ToolError] search: timeout");
    expect(toolErrorMessage("search", "plain")).toBe("[ToolError] search: plain");
    expect(toolResolutionMessage("lookup", new ToolResolutionError("no order 42"))).toBe("[ToolResolutionError] lookup: no order 42");
  });

  it("prerequisite and loop-break messages carry their details", () => {
    expect(prerequisiteMessage("edit", ['read(path="a")'])).toContain('read(path="a")');
    expect(loopBreakMessage("search", 3)).toContain("3 time(s)");
  });

  it("blockedBatchResults answers every call, skipping the non-offending ones", () => {
    const results = blockedBatchResults([{ tool: "a" }, { tool: "b" }, { tool: "c" }], new Map([[1, "[PrereqError] x"]]));
    expect(results).toEqual([
      { index: 0, tool: "a", content: batchSkippedMessage("a") },
      { index: 1, tool: "b", content: "[PrereqError] x" },
      { index: 2, tool: "c", content: batchSkippedMessage("c") },
    ]);
  });
});

describe("hardening", () => {
  it("a thrown value whose toString or message getter throws is still described", () => {
    const hostile = { toString: () => { throw new Error("nope"); } };
    expect(toolErrorMessage("t", hostile)).toBe("[ToolError] t: [object Object]");
    expect(toolErrorMessage("t", Object.create(null))).toBe("[ToolError] t: [object Object]");
    const getter = Object.defineProperty(new Error("x"), "message", { get: () => { throw new Error("nope"); } });
    expect(toolErrorMessage("t", getter)).toBe("[ToolError] t: Error: [unreadable message]");
    expect(toolResolutionMessage("t", Symbol("s"))).toBe("[ToolResolutionError] t: Symbol(s)");
  });

  it("tooManyCallsNudge and argsTooDeepNudge are user-channel retries naming the limit", () => {
    expect(tooManyCallsNudge(500, 64, ["a"])).toMatchObject({ role: "user", kind: "too_many_calls", tier: 0 });
    expect(tooManyCallsNudge(500, 64, ["a"]).content).toMatch(/500 tool calls; at most 64.*"a"/);
    expect(argsTooDeepNudge("a", 256)).toMatchObject({ role: "user", kind: "args_too_deep" });
    expect(isToolErrorContent(argsTooDeepNudge("a", 256).content)).toBe(false);
  });
});
