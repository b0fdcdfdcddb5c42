import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  findPrematureTerminal,
  pendingSteps,
  prerequisiteBlock,
  StepEnforcer,
  stepBlock,
  stepTier,
  summaryHint,
  type CompletedStep,
} from "../../src/guardrails/step-enforcer.js";
import { batchSkippedMessage, stepNudgeMessage } from "../../src/guardrails/nudges.js";
import { InvalidArgumentError } from "../../src/core/errors.js";

const done = (...tools: string[]): CompletedStep[] => tools.map((tool) => ({ tool, args: {} }));

describe("pendingSteps", () => {
  it("keeps declared order and drops completed steps", () => {
    expect(pendingSteps(["a", "b", "c"], done("c", "x", "a"))).toEqual(["b"]);
    expect(pendingSteps([], done("a"))).toEqual([]);
  });

  it("is an order-preserving subset of required (property)", () => {
    const names = fc.constantFrom<string>("a", "b", "c", "d", "e");
    fc.assert(
      fc.property(fc.uniqueArray(names), fc.array(names), (required, completed) => {
        const pending = pendingSteps(required, done(...completed));
        expect(pending.every((p) => required.includes(p))).toBe(true);
        const positions = pending.map((p) => required.indexOf(p));
        expect([...positions].sort((x, y) => x - y)).toEqual(positions);
        expect(pending.some((p) => completed.includes(p))).toBe(false);
      }),
    );
  });
});

describe("findPrematureTerminal", () => {
  it("flags a terminal call while steps are pending", () => {
    expect(findPrematureTerminal([{ tool: "s" }, { tool: "answer" }], ["answer"], ["s"], [])).toEqual({ terminalTool: "answer", pending: ["s"] });
  });
  it("passes when satisfied, when no terminal is called, or with several terminals", () => {
    expect(findPrematureTerminal([{ tool: "answer" }], ["answer"], ["s"], done("s"))).toBeNull();
    expect(findPrematureTerminal([{ tool: "s" }], ["answer"], ["s"], [])).toBeNull();
    expect(findPrematureTerminal([{ tool: "b" }], ["a", "b"], ["s"], [])).toEqual({ terminalTool: "b", pending: ["s"] });
  });
});

describe("stepTier", () => {
  it("maps 1→1, 2→2, ≥3→3", () => {
    expect([1, 2, 3, 4, 10].map(stepTier)).toEqual([1, 2, 3, 3, 3]);
  });
});

describe("summaryHint", () => {
  it("lists distinct tools in first-run order", () => {
    expect(summaryHint([])).toBe("[No steps completed yet]");
    expect(summaryHint(done("b", "a", "b"))).toBe("[Steps completed: b, a]");
  });
});

describe("stepBlock / prerequisiteBlock", () => {
  it("blocks the terminal call with the tiered message and skips the rest", () => {
    const block = stepBlock([{ tool: "s" }, { tool: "answer" }], { terminalTool: "answer", pending: ["s"] }, 2, 3);
    expect(block).toMatchObject({ kind: "step", tier: 2, attempts: 2, exhausted: false, nudge: { role: "tool", kind: "step", tier: 2 } });
    expect(block.results).toEqual([
      { index: 0, tool: "s", content: batchSkippedMessage("s") },
      { index: 1, tool: "answer", content: stepNudgeMessage("answer", ["s"], 2) },
    ]);
    expect(stepBlock([{ tool: "answer" }], { terminalTool: "answer", pending: ["s"] }, 4, 3).exhausted).toBe(true);
  });
  it("prerequisiteBlock needs a violation", () => {
    expect(() => prerequisiteBlock([{ tool: "a" }], [], 1, 2)).toThrow(InvalidArgumentError);
    const block = prerequisiteBlock([{ tool: "a" }], [{ index: 0, tool: "a", missing: ["b"] }], 3, 2);
    expect(block).toMatchObject({ kind: "prerequisite", tier: 3, exhausted: true, nudge: { kind: "prerequisite" } });
    expect(block.results[0]?.content).toMatch(/^\[PrereqError\]/);
  });
});

describe("StepEnforcer", () => {
  it("escalates tiers 1,2,3 and is exhausted on the 4th premature call", () => {
    const s = new StepEnforcer({ requiredSteps: ["search"], terminalTools: ["answer"] });
    const tiers: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c = s.check([{ tool: "answer" }]);
      if (!c.needsNudge) throw new Error("expected a nudge");
      tiers.push(c.tier);
      expect(c.nudge.content).toMatch(/^\[StepEnforcementError\].*"search"/);
      expect(s.prematureExhausted).toBe(false);
    }
    expect(tiers).toEqual([1, 2, 3]);
    const fourth = s.check([{ tool: "answer" }]);
    expect(fourth.needsNudge && fourth.exhausted).toBe(true);
    expect(s.prematureAttempts).toBe(4);
    expect(s.prematureExhausted).toBe(true);
  });

  it("resetPremature restarts the escalation; record satisfies the step", () => {
    const s = new StepEnforcer({ requiredSteps: ["search"], terminalTools: ["answer"] });
    s.check([{ tool: "answer" }]);
    s.check([{ tool: "answer" }]);
    s.resetPremature();
    const again = s.check([{ tool: "answer" }]);
    expect(again.needsNudge && again.tier).toBe(1);
    expect(s.isSatisfied()).toBe(false);
    expect(s.pending()).toEqual(["search"]);
    s.record("search", { q: "x" });
    expect(s.isSatisfied()).toBe(true);
    expect(s.check([{ tool: "answer" }])).toEqual({ needsNudge: false });
    expect(s.summaryHint()).toBe("[Steps completed: search]");
  });

  it("prerequisite violations: arg-matched, exhausted at max+1, reset", () => {
    const s = new StepEnforcer({
      toolPrerequisites: { edit: [{ tool: "read", args: { path: "$path" } }] },
      maxPrereqViolations: 1,
    });
    const first = s.checkPrerequisites([{ tool: "edit", args: { path: "a" } }]);
    expect(first.needsNudge && first.kind === "prerequisite" && first.violations[0]?.missing).toEqual(['read(path="a")']);
    expect(s.prereqExhausted).toBe(false);
    s.record("read", { path: "b" });
    const second = s.checkPrerequisites([{ tool: "edit", args: { path: "a" } }]);
    expect(second.needsNudge && second.exhausted).toBe(true);
    expect(s.prereqViolations).toBe(2);
    s.resetPrereqViolations();
    expect(s.prereqViolations).toBe(0);
    s.record("read", { path: "a" });
    expect(s.checkPrerequisites([{ tool: "edit", args: { path: "a" } }])).toEqual({ needsNudge: false });
  });

  it("reads prerequisites from tool definitions", () => {
    const s = new StepEnforcer({ tools: { edit: { prerequisites: ["read"] }, read: { prerequisites: [] } } });
    expect(s.checkPrerequisites([{ tool: "edit", args: {} }]).needsNudge).toBe(true);
    expect(() => new StepEnforcer({ tools: {}, toolPrerequisites: {} })).toThrow(InvalidArgumentError);
    expect(() => new StepEnforcer({ maxPrematureAttempts: -1 })).toThrow(/maxPrematureAttempts/);
  });

  it("completedSteps is a copy and only grows (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("a", "b", "answer"), fc.boolean())), (ops) => {
        const s = new StepEnforcer({ requiredSteps: ["a", "b"], terminalTools: ["answer"] });
        let previous: CompletedStep[] = [];
        for (const [tool, isRecord] of ops) {
          if (isRecord) s.record(tool, { t: tool });
          else s.check([{ tool }]);
          s.completedSteps.pop();
          const now = s.completedSteps;
          expect(now.slice(0, previous.length)).toEqual(previous);
          expect(now.length).toBeGreaterThanOrEqual(previous.length);
          previous = now;
        }
      }),
    );
  });
});
