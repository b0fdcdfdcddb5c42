/**
 * Invariants of the built-in strategies on generated loop histories (see history-fixtures.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/core/messages.js";
import type { CompactStrategy } from "../../src/context/compact-strategy.js";
import { isProtectedMessage, isRecentMessage, recentWindowStart } from "../../src/context/history-window.js";
import { SlidingWindowCompact } from "../../src/context/sliding-window-compact.js";
import { TieredCompact } from "../../src/context/tiered-compact.js";
import { estimateTokensChars4 } from "../../src/context/token-estimator.js";
import { deepFreeze, historyArb } from "./history-fixtures.js";

const numRuns = 150;

/** A history, a trigger anywhere from 0 to a bit above its size, and a step hint. */
const caseArb = historyArb.chain((history) =>
  fc.record({
    history: fc.constant(history),
    // the upper half is where phases 1 and 2 stop; the full range mostly reaches phase 3
    trigger: fc.oneof(
      fc.nat(Math.ceil(estimateTokensChars4(history) * 1.1)),
      fc.integer({ min: Math.floor(estimateTokensChars4(history) / 2), max: estimateTokensChars4(history) }),
    ),
    hint: fc.constantFrom("", "[Steps completed: tool_0]", "[Steps completed: tool_0, tool_1, tool_2]"),
    keepRecent: fc.integer({ min: 0, max: 4 }),
  }),
);

const strategies: [string, (keepRecent: number) => CompactStrategy][] = [
  ["TieredCompact", (k) => new TieredCompact({ keepRecent: k })],
  ["SlidingWindowCompact", (k) => new SlidingWindowCompact({ keepRecent: k })],
];

/** The unprotected messages of the keepRecent latest iterations, in order. */
function recentWindow(history: readonly Message[], keepRecent: number): Message[] {
  const start = recentWindowStart(history, keepRecent);
  return history.filter((m, i) => !isProtectedMessage(m, i) && isRecentMessage(m, i, start));
}

describe.each(strategies)("%s properties", (_name, make) => {
  it("never mutates its input, keeps the system prompt and the first user input", () => {
    fc.assert(
      fc.property(caseArb, ({ history, trigger, hint, keepRecent }) => {
        const before = JSON.stringify(history);
        const frozen = deepFreeze(history);
        const { messages } = make(keepRecent).compact(frozen, trigger, { stepHint: hint });
        expect(JSON.stringify(history)).toBe(before);
        expect(messages[0]).toBe(history[0]);
        const firstUser = history.find((m) => m.meta.type === "user_input")!;
        expect(messages.filter((m) => m.meta.type === "user_input")).toEqual(
          history.filter((m) => m.meta.type === "user_input"),
        );
        expect(messages).toContain(firstUser);
      }),
      { numRuns },
    );
  });

  it("never returns a longer history than it was given", () => {
    fc.assert(
      fc.property(caseArb, ({ history, trigger, hint, keepRecent }) => {
        const { messages } = make(keepRecent).compact(history, trigger, { stepHint: hint });
        expect(estimateTokensChars4(messages)).toBeLessThanOrEqual(estimateTokensChars4(history));
      }),
      { numRuns },
    );
  });

  it("keeps the keepRecent latest iterations byte-identical and in order", () => {
    fc.assert(
      fc.property(caseArb, ({ history, trigger, hint, keepRecent }) => {
        const { messages } = make(keepRecent).compact(history, trigger, { stepHint: hint });
        const recent = recentWindow(history, keepRecent);
        const kept = messages.filter((m) => recent.includes(m));
        expect(kept).toEqual(recent);
        expect(JSON.stringify(kept)).toBe(JSON.stringify(recent));
      }),
      { numRuns },
    );
  });

  it("is idempotent on an already-compacted history", () => {
    fc.assert(
      fc.property(caseArb, ({ history, trigger, hint, keepRecent }) => {
        const strategy = make(keepRecent);
        const once = strategy.compact(history, trigger, { stepHint: hint }).messages;
        const twice = strategy.compact(deepFreeze(once.slice()), trigger, { stepHint: hint }).messages;
        expect(twice).toEqual(once);
      }),
      { numRuns },
    );
  });
});

describe("TieredCompact-only properties", () => {
  it("reaches a phase that is monotone in the trigger: a smaller trigger never yields a lower phase", () => {
    fc.assert(
      fc.property(caseArb, fc.nat(4000), ({ history, trigger, hint, keepRecent }, delta) => {
        const tiered = new TieredCompact({ keepRecent });
        const low = tiered.compact(history, trigger, { stepHint: hint }).phase;
        const high = tiered.compact(history, trigger + delta, { stepHint: hint }).phase;
        expect(low).toBeGreaterThanOrEqual(high);
      }),
      { numRuns },
    );
  });

  it("keeps every tool call, stops at the first phase under the trigger, and never adds a second summary", () => {
    fc.assert(
      fc.property(caseArb, ({ history, trigger, hint, keepRecent }) => {
        const { messages, phase } = new TieredCompact({ keepRecent }).compact(history, trigger, { stepHint: hint });
        const calls = (ms: readonly Message[]) => ms.filter((m) => m.meta.type === "tool_call");
        expect(calls(messages)).toEqual(calls(history));
        if (phase < 3) expect(estimateTokensChars4(messages)).toBeLessThanOrEqual(trigger);
        if (phase === 0) expect(messages).toEqual(history);
        expect(messages.filter((m) => m.meta.type === "summary").length).toBeLessThanOrEqual(1);
      }),
      { numRuns },
    );
  });
});
