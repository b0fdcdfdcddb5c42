import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { createMessage, type Message } from "../../src/core/messages.js";
import { TieredCompact } from "../../src/context/tiered-compact.js";
import { estimateTokensChars4, type TokenEstimator } from "../../src/context/token-estimator.js";
import { buildHistory, deepFreeze, head, iterationMessages, text } from "./history-fixtures.js";

const types = (ms: readonly Message[]) => ms.map((m) => m.meta.type);
const ofStep = (ms: readonly Message[], step: number) => ms.filter((m) => m.meta.stepIndex === step);

/** Four iterations, each with reasoning, a 2-call batch (1000-char results) and nudges. */
function sample(): Message[] {
  const spec = { reasoning: 300, resultLengths: [1000, 1000], retry: true, stepNudge: true, prereqNudge: true };
  return deepFreeze(buildHistory([spec, spec, spec, spec]));
}

/** Trigger that phase `p` (1..3) just meets, so compaction stops exactly there. */
function triggerFor(history: Message[], strategy: TieredCompact, phase: number): number {
  const result = strategy.compact(history, 0); // phase 3, no hint
  expect(result.phase).toBe(3);
  const p: number[] = [];
  for (let t = estimateTokensChars4(history) - 1; t >= 0 && p.length < 3; t--) {
    const r = strategy.compact(history, t);
    if (r.phase > p.length) p.push(t);
  }
  return p[phase - 1]!;
}

describe("TieredCompact", () => {
  const tiered = new TieredCompact();

  it("returns a copy with phase 0 when the history is already at or under the trigger", () => {
    const h = sample();
    const r = tiered.compact(h, estimateTokensChars4(h));
    expect(r.phase).toBe(0);
    expect(r.messages).toEqual(h);
    expect(r.messages).not.toBe(h);
  });

  it("phase 1 drops old nudges and truncates old tool results with the marker", () => {
    const h = sample();
    const r = tiered.compact(h, triggerFor(h, tiered, 1));
    expect(r.phase).toBe(1);
    const old = r.messages.filter((m) => m.meta.stepIndex !== undefined && m.meta.stepIndex < 2);
    expect(types(old)).toEqual([
      ...["text_response", "reasoning", "tool_call", "tool_result", "tool_result"],
      ...["text_response", "reasoning", "tool_call", "tool_result", "tool_result"],
    ]);
    const result = old.find((m) => m.meta.type === "tool_result")!;
    expect(result.content).toBe(`${text("s0 result 0", 1000).slice(0, 200)}\n[Truncated — 800 chars removed]`);
    expect(result.meta).toEqual({ type: "tool_result", stepIndex: 0, originalType: "tool_result" });
    expect(result.toolCallId).toBe("c0_0");
    expect(result.toolName).toBe("tool_0");
    // the two recent iterations are untouched (same objects)
    for (const step of [2, 3]) expect(ofStep(r.messages, step)).toEqual(ofStep(h, step));
    expect(ofStep(r.messages, 3)[0]).toBe(ofStep(h, 3)[0]);
  });

  it("phase 2 drops old tool results and keeps reasoning and text responses", () => {
    const h = sample();
    const r = tiered.compact(h, triggerFor(h, tiered, 2));
    expect(r.phase).toBe(2);
    expect(types(ofStep(r.messages, 0))).toEqual(["text_response", "reasoning", "tool_call"]);
    for (const step of [2, 3]) expect(ofStep(r.messages, step)).toEqual(ofStep(h, step));
  });

  it("phase 3 keeps only tool calls in the old window and inserts the step hint after the head", () => {
    const h = sample();
    const r = tiered.compact(h, 0, { stepHint: "[Steps completed: tool_0, tool_1]" });
    expect(r.phase).toBe(3);
    expect(r.messages.slice(0, 3)).toEqual([
      h[0],
      h[1],
      { role: "system", content: "[Steps completed: tool_0, tool_1]", meta: { type: "summary" } },
    ]);
    expect(types(ofStep(r.messages, 0))).toEqual(["tool_call"]);
    expect(types(ofStep(r.messages, 1))).toEqual(["tool_call"]);
    expect(ofStep(r.messages, 0)[0]).toBe(ofStep(h, 0).find((m) => m.meta.type === "tool_call"));
    for (const step of [2, 3]) expect(ofStep(r.messages, step)).toEqual(ofStep(h, step));
  });

  it("phase 3 updates an existing summary instead of adding a second one", () => {
    const h = sample();
    const first = tiered.compact(h, 0, { stepHint: "[Steps completed: a]" }).messages;
    const more = deepFreeze([...first, ...iterationMessages(4, { resultLengths: [1500] })]);
    const second = tiered.compact(more, 0, { stepHint: "[Steps completed: a, b]" }).messages;
    const summaries = second.filter((m) => m.meta.type === "summary");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.content).toBe("[Steps completed: a, b]");
    expect(second[2]).toBe(summaries[0]);
  });

  it("phase 3 without a hint keeps an existing summary, and never adds an empty one", () => {
    const h = sample();
    expect(tiered.compact(h, 0, { stepHint: "  " }).messages.some((m) => m.meta.type === "summary")).toBe(false);
    const withSummary = tiered.compact(h, 0, { stepHint: "[Steps completed: a]" }).messages;
    const again = tiered.compact(withSummary, 0).messages;
    expect(again.filter((m) => m.meta.type === "summary").map((m) => m.content)).toEqual(["[Steps completed: a]"]);
  });

  it("leaves the summary out when it would make the history longer than the input", () => {
    const h = deepFreeze(buildHistory([{ resultLengths: [0] }, { resultLengths: [0] }, { resultLengths: [0] }]));
    const r = tiered.compact(h, 0, { stepHint: `[Steps completed: ${"x".repeat(400)}]` });
    expect(r.phase).toBe(3);
    // only the empty step-0 result went (4 tokens of overhead): too little room for the hint
    expect(r.messages).toEqual(h.filter((_, i) => i !== 3));
    expect(estimateTokensChars4(r.messages)).toBeLessThanOrEqual(estimateTokensChars4(h));
  });

  it("is idempotent: compacting the output again changes nothing", () => {
    const h = sample();
    for (const trigger of [0, triggerFor(h, tiered, 1), triggerFor(h, tiered, 2)]) {
      const once = tiered.compact(h, trigger, { stepHint: "[Steps completed: a]" }).messages;
      const twice = tiered.compact(deepFreeze(once), trigger, { stepHint: "[Steps completed: a]" }).messages;
      expect(twice).toEqual(once);
    }
  });

  it("does not truncate results whose marker would not make them shorter, nor split a surrogate pair", () => {
    const short = text("short", 215);
    const emoji = `${"a".repeat(199)}😀${"b".repeat(300)}`;
    const h = deepFreeze([
      ...head(),
      createMessage("tool", short, "tool_result", { stepIndex: 0 }),
      createMessage("tool", emoji, "tool_result", { stepIndex: 0 }),
      ...iterationMessages(1, { resultLengths: [10] }),
      ...iterationMessages(2, { resultLengths: [10] }),
    ]);
    const r = tiered.compact(h, estimateTokensChars4(h) - 1);
    expect(r.phase).toBe(1);
    expect(r.messages[2]).toBe(h[2]);
    expect(r.messages[3]!.content).toBe(`${"a".repeat(199)}\n[Truncated — 302 chars removed]`);
  });

  it("groups a parallel batch as one iteration and honours keepRecent", () => {
    const h = deepFreeze(buildHistory([{ resultLengths: [900, 900, 900] }, { resultLengths: [900] }, { resultLengths: [900] }]));
    const keep1 = new TieredCompact({ keepRecent: 1 }).compact(h, 0);
    expect(types(ofStep(keep1.messages, 1))).toEqual(["tool_call"]);
    expect(ofStep(keep1.messages, 2)).toEqual(ofStep(h, 2));
    const keep3 = new TieredCompact({ keepRecent: 3 }).compact(h, 0);
    expect(keep3.messages).toEqual(h);
    const keep0 = new TieredCompact({ keepRecent: 0 }).compact(h, 0);
    expect(types(keep0.messages)).toEqual(["system_prompt", "user_input", "tool_call", "tool_call", "tool_call"]);
  });

  it("never cuts later user inputs, and treats messages without stepIndex as eligible", () => {
    const h = deepFreeze([
      ...head(),
      createMessage("tool", text("orphan", 900), "tool_result"),
      createMessage("user", "second turn", "user_input"),
      ...iterationMessages(0, { resultLengths: [900], reasoning: 100 }),
      ...iterationMessages(1, { resultLengths: [900] }),
      ...iterationMessages(2, { resultLengths: [900] }),
    ]);
    const r = tiered.compact(h, 0);
    expect(types(r.messages)).toEqual([
      ...["system_prompt", "user_input", "user_input", "tool_call"],
      ...["tool_call", "tool_result", "tool_call", "tool_result"],
    ]);
  });

  it("keeps the current turn's latest iterations intact when an earlier turn used larger step indexes", () => {
    // multi-turn: turn 1 (initialMessages) ran steps 0..4, turn 2 restarted the loop at step 0
    const turn1 = buildHistory([0, 1, 2, 3, 4].map(() => ({ resultLengths: [1500], reasoning: 100 })));
    const turn2 = [
      ...iterationMessages(0, { resultLengths: [1500], reasoning: 100, userInputBefore: true }),
      ...iterationMessages(1, { resultLengths: [1500], reasoning: 100 }),
    ];
    const ms = deepFreeze([...turn1, ...turn2]);
    const r = new TieredCompact({ keepRecent: 2 }).compact(ms, 0);
    expect(r.phase).toBe(3);
    expect(r.messages.slice(-turn2.length)).toEqual(turn2);
    expect(r.messages.slice(-turn2.length).every((m, i) => m === turn2[i])).toBe(true);
    expect(types(r.messages.slice(2, -turn2.length))).toEqual(Array(5).fill("tool_call"));
  });

  it("uses a custom estimator for the phase checks", () => {
    const h = sample();
    const count: TokenEstimator = (ms) => ms.length; // one token per message
    // phase 1 removes the 6 old nudges (3 per old iteration); that meets a trigger of length - 6
    expect(tiered.compact(h, h.length - 6, { estimateTokens: count }).phase).toBe(1);
    expect(tiered.compact(h, h.length - 7, { estimateTokens: count }).phase).toBe(2);
  });

  it("validates its options and the trigger", () => {
    expect(() => new TieredCompact({ keepRecent: -1 })).toThrow(InvalidArgumentError);
    expect(() => new TieredCompact({ keepRecent: 1.5 })).toThrow(/keepRecent/);
    expect(() => tiered.compact(sample(), Number.NaN)).toThrow(/triggerTokens/);
    expect(TieredCompact.TRUNCATE_CHARS).toBe(200);
    expect(new TieredCompact().keepRecent).toBe(2);
    expect(tiered.name).toBe("tiered");
  });
});
