import { describe, expect, it } from "vitest";
import { createMessage, type Message } from "../../src/core/messages.js";
import { headEndIndex, isProtectedMessage, isRecentMessage, recentWindowStart } from "../../src/context/history-window.js";

const at = (stepIndex: number | undefined, type: Message["meta"]["type"] = "tool_call") =>
  createMessage("assistant", "", type, stepIndex === undefined ? {} : { stepIndex });

describe("history window", () => {
  it("counts the keepRecent latest iterations from the end, as runs of one stepIndex", () => {
    const ms = [at(undefined, "system_prompt"), at(9, "user_input"), at(0), at(0), at(3), at(1), at(1), at(undefined)];
    expect(recentWindowStart(ms, 1)).toBe(5);
    expect(recentWindowStart(ms, 2)).toBe(4);
    expect(recentWindowStart(ms, 3)).toBe(2);
    expect(recentWindowStart(ms, 4)).toBe(2);
    expect(recentWindowStart(ms, 0)).toBe(ms.length);
    expect(ms.filter((m, i) => isRecentMessage(m, i, 5))).toEqual([ms[5], ms[6]]); // the unstepped tail is not recent
  });

  it("keeps the current turn recent when an earlier turn used larger step indexes (multi-turn)", () => {
    // turn 1 ran steps 0..5; turn 2 (after a new user_input) restarted at 0 and is at step 1
    const earlier = [0, 1, 2, 3, 4, 5].map((s) => at(s));
    const ms = [at(undefined, "system_prompt"), at(undefined, "user_input"), ...earlier, at(undefined, "user_input"), at(0), at(1)];
    const start = recentWindowStart(ms, 2);
    expect(ms.filter((m, i) => !isProtectedMessage(m, i) && isRecentMessage(m, i, start))).toEqual([ms[9], ms[10]]);
    // the same step value on both sides of a user_input is two iterations, not one
    const same = [at(undefined, "system_prompt"), at(undefined, "user_input"), at(0), at(undefined, "user_input"), at(0)];
    expect(recentWindowStart(same, 1)).toBe(4);
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
