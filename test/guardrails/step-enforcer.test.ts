import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  findPrematureTerminal,
  pendingSteps,
  prerequisiteBlock,
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
