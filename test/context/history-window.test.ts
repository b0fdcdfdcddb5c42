import { describe, expect, it } from "vitest";
import { createMessage, type Message } from "../../src/core/messages.js";
import { headEndIndex, isProtectedMessage, recentStepCutoff } from "../../src/context/history-window.js";

const at = (stepIndex: number | undefined, type: Message["meta"]["type"] = "tool_call") =>
  createMessage("assistant", "", type, stepIndex === undefined ? {} : { stepIndex });

describe("history window", () => {
  it("finds the keepRecent-th largest distinct stepIndex of unprotected messages", () => {
    const ms = [at(undefined, "system_prompt"), at(9, "user_input"), at(0), at(0), at(3), at(1), at(3), at(undefined)];
    expect(recentStepCutoff(ms, 1)).toBe(3);
    expect(recentStepCutoff(ms, 2)).toBe(1);
    expect(recentStepCutoff(ms, 3)).toBe(0);
    expect(recentStepCutoff(ms, 4)).toBe(Number.NEGATIVE_INFINITY);
    expect(recentStepCutoff(ms, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it("protects messages[0], system prompts, user inputs and summaries", () => {
    expect(isProtectedMessage(at(0, "reasoning"), 0)).toBe(true);
    expect(isProtectedMessage(at(0, "reasoning"), 1)).toBe(false);
    for (const t of ["system_prompt", "user_input", "summary"] as const) expect(isProtectedMessage(at(0, t), 5)).toBe(true);
  });

  it("places the head end at the first user input", () => {
    expect(headEndIndex([at(undefined, "system_prompt"), at(0), at(undefined, "user_input")])).toBe(2);
    expect(headEndIndex([at(undefined, "system_prompt"), at(0)])).toBe(0);
  });
});
