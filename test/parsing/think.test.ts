import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { splitReasoning } from "../../src/parsing/index.js";

describe("splitReasoning", () => {
  it("splits <think>…</think>", () => {
    expect(splitReasoning("<think>plan</think>Answer")).toEqual({ content: "Answer", reasoning: "plan" });
  });
  it("a leading unopened …</think> (opener was in the prompt)", () => {
    expect(splitReasoning("plan here\n</think>\n\nAnswer")).toEqual({ content: "\n\nAnswer", reasoning: "plan here" });
  });
  it("[THINK]…[/THINK] and an unclosed opener at the end", () => {
    expect(splitReasoning("[THINK]a[/THINK]b")).toEqual({ content: "b", reasoning: "a" });
    expect(splitReasoning("x<think>still thinking")).toEqual({ content: "x", reasoning: "still thinking" });
  });
  it("Harmony analysis channel", () => {
    const r = splitReasoning("<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Hi");
    expect(r.reasoning).toBe("think");
    expect(r.content).toBe("<|start|>assistant<|channel|>final<|message|>Hi");
  });
  it("no reasoning → no reasoning key; non-string → typed error", () => {
    expect(splitReasoning("plain")).toEqual({ content: "plain" });
    expect(() => splitReasoning(42 as unknown as string)).toThrow(InvalidArgumentError);
  });
});
