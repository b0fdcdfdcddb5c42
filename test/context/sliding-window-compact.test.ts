import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { createMessage, type Message } from "../../src/core/messages.js";
import { SlidingWindowCompact } from "../../src/context/sliding-window-compact.js";
import { buildHistory, deepFreeze, head, iterationMessages } from "./history-fixtures.js";

const steps = (ms: readonly Message[]) => [...new Set(ms.map((m) => m.meta.stepIndex).filter((s) => s !== undefined))];

describe("SlidingWindowCompact", () => {
  const h = deepFreeze(
    buildHistory([
      { resultLengths: [100], reasoning: 50 },
      { resultLengths: [100, 200, 300], retry: true },
      { resultLengths: [100], stepNudge: true },
      { resultLengths: [100, 100] },
      { resultLengths: [100], prereqNudge: true },
    ]),
  );

  it("keeps the system prompt, the first user input and the last keepRecent iterations", () => {
    const r = new SlidingWindowCompact().compact(h, 0);
    expect(r.phase).toBe(1);
    expect(r.messages.slice(0, 2)).toEqual(h.slice(0, 2));
    expect(steps(r.messages)).toEqual([2, 3, 4]);
    expect(r.messages.slice(2)).toEqual(h.filter((m) => (m.meta.stepIndex ?? -1) >= 2));
  });

  it("counts a parallel batch as one iteration", () => {
    const r = new SlidingWindowCompact({ keepRecent: 4 }).compact(h, 0);
    expect(steps(r.messages)).toEqual([1, 2, 3, 4]);
    expect(r.messages.filter((m) => m.meta.stepIndex === 1)).toHaveLength(1 + 1 + 1 + 3);
  });

  it("returns phase 0 and the same messages when nothing is old enough to drop", () => {
    const r = new SlidingWindowCompact({ keepRecent: 5 }).compact(h, 0);
    expect(r.phase).toBe(0);
    expect(r.messages).toEqual(h);
  });

  it("keeps later user inputs and summaries, and drops unstepped non-protected messages", () => {
    const ms = deepFreeze([
      ...head(),
      createMessage("system", "[Steps completed: a]", "summary"),
      createMessage("tool", "stray", "tool_result"),
      ...iterationMessages(0, { resultLengths: [10], userInputBefore: true }),
      ...iterationMessages(1, { resultLengths: [10] }),
    ]);
    const r = new SlidingWindowCompact({ keepRecent: 1 }).compact(ms, 0);
    expect(r.messages.map((m) => m.meta.type)).toEqual([
      ...["system_prompt", "user_input", "summary", "user_input", "tool_call", "tool_result"],
    ]);
  });

  it("keeps the current turn's latest iterations when an earlier turn used larger step indexes", () => {
    // multi-turn: turn 1 (initialMessages) ran steps 0..4, turn 2 restarted the loop at step 0
    const turn1 = buildHistory([0, 1, 2, 3, 4].map(() => ({ resultLengths: [10] })));
    const turn2 = [...iterationMessages(0, { resultLengths: [10], userInputBefore: true }), ...iterationMessages(1, { resultLengths: [10] })];
    const ms = deepFreeze([...turn1, ...turn2]);
    const r = new SlidingWindowCompact({ keepRecent: 2 }).compact(ms, 0);
    expect(r.messages).toEqual([...turn1.slice(0, 2), ...turn2]);
  });

  it("validates keepRecent", () => {
    expect(() => new SlidingWindowCompact({ keepRecent: -2 })).toThrow(InvalidArgumentError);
    expect(new SlidingWindowCompact().keepRecent).toBe(3);
    expect(new SlidingWindowCompact().name).toBe("sliding");
  });
});
