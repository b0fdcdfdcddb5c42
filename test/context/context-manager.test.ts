import { describe, expect, it } from "vitest";
import { ContextBudgetExceeded, ForgeError, InvalidArgumentError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import type { CompactOptions, CompactStrategy } from "../../src/context/compact-strategy.js";
import { ContextManager, type CompactEvent } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import { SlidingWindowCompact } from "../../src/context/sliding-window-compact.js";
import { TieredCompact } from "../../src/context/tiered-compact.js";
import { estimateTokensChars4, type TokenEstimator } from "../../src/context/token-estimator.js";
import { buildHistory, deepFreeze } from "./history-fixtures.js";

const spec = { reasoning: 200, resultLengths: [1500, 1500], stepNudge: true };
const history = deepFreeze(buildHistory([spec, spec, spec, spec, spec]));
const total = estimateTokensChars4(history);

/** Records what it was called with and delegates to a real strategy. */
class RecordingStrategy implements CompactStrategy {
  readonly name = "recording";
  calls: { trigger: number; options: CompactOptions | undefined }[] = [];
  constructor(private readonly inner: CompactStrategy) {}
  compact(messages: readonly Message[], trigger: number, options?: CompactOptions) {
    this.calls.push({ trigger, options });
    return this.inner.compact(messages, trigger, options);
  }
}

describe("ContextManager", () => {
  it("defaults to TieredCompact, threshold 0.75 and trigger = floor(budget * threshold)", () => {
    const m = new ContextManager({ budgetTokens: 1001 });
    expect(m.strategy).toBeInstanceOf(TieredCompact);
    expect(m.compactThreshold).toBe(0.75);
    expect(m.triggerTokens).toBe(750);
    expect(new ContextManager({ budgetTokens: 1000, compactThreshold: 1 }).triggerTokens).toBe(1000);
  });

  it("under the trigger returns the same array and fires no event", () => {
    const events: CompactEvent[] = [];
    const strategy = new RecordingStrategy(new TieredCompact());
    const m = new ContextManager({ budgetTokens: Math.ceil(total / 0.75), strategy, onCompact: (e) => events.push(e) });
    expect(m.maybeCompact(history, 3)).toBe(history);
    expect(m.compact(history)).toEqual({ messages: history, event: null });
    expect(events).toEqual([]);
    expect(strategy.calls).toEqual([]);
  });

  it("over the trigger compacts and reports accurate counts through onCompact", () => {
    const events: CompactEvent[] = [];
    const m = new ContextManager({ budgetTokens: total, onCompact: (e) => events.push(e) });
    const out = m.maybeCompact(history, 7, "[Steps completed: tool_0]");
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({
      stepIndex: 7,
      tokensBefore: total,
      tokensAfter: estimateTokensChars4(out),
      budgetTokens: total,
      messagesBefore: history.length,
      messagesAfter: out.length,
      phaseReached: events[0]!.phaseReached,
      strategy: "tiered",
    });
    expect(events[0]!.phaseReached).toBeGreaterThanOrEqual(1);
    expect(estimateTokensChars4(out)).toBeLessThanOrEqual(m.triggerTokens);
  });

  it("forwards the trigger, the step hint and its estimator to the strategy", () => {
    const strategy = new RecordingStrategy(new TieredCompact());
    const m = new ContextManager({ budgetTokens: total, strategy });
    m.maybeCompact(history, 1, "[Steps completed: a]");
    expect(strategy.calls).toEqual([
      { trigger: m.triggerTokens, options: { estimateTokens: estimateTokensChars4, stepHint: "[Steps completed: a]" } },
    ]);
  });

  it("compact() returns the event and reports the same event to onCompact", () => {
    const events: CompactEvent[] = [];
    const m = new ContextManager({ budgetTokens: total, strategy: new SlidingWindowCompact({ keepRecent: 1 }), onCompact: (e) => events.push(e) });
    const { messages, event } = m.compact(history, { stepIndex: 4 });
    expect(events).toEqual([event]);
    expect(event).toMatchObject({ stepIndex: 4, phaseReached: 1, strategy: "sliding", messagesAfter: messages.length });
  });

  it("defaults the event's stepIndex to 0 and works without onCompact", () => {
    const m = new ContextManager({ budgetTokens: total });
    expect(m.compact(history).event?.stepIndex).toBe(0);
    expect(() => m.maybeCompact(history)).not.toThrow();
  });

  it("fires no event when the strategy applied nothing but the history fits the budget", () => {
    const events: CompactEvent[] = [];
    const m = new ContextManager({ budgetTokens: total, strategy: new NoCompact(), onCompact: (e) => events.push(e) });
    const out = m.maybeCompact(history);
    expect(out).toEqual(history);
    expect(events).toEqual([]);
  });

  it("throws ContextBudgetExceeded when still over the hard budget after the strategy", () => {
    const events: CompactEvent[] = [];
    const none = new ContextManager({ budgetTokens: total - 1, strategy: new NoCompact(), onCompact: (e) => events.push(e) });
    const e1 = (() => {
      try {
        none.maybeCompact(history);
      } catch (e) {
        return e;
      }
    })();
    expect(e1).toBeInstanceOf(ContextBudgetExceeded);
    expect(ForgeError.isInstance(e1)).toBe(true);
    expect((e1 as ContextBudgetExceeded).data).toEqual({ estimatedTokens: total, budgetTokens: total - 1, phaseReached: 0 });
    expect(events).toEqual([]);

    const tiny = new ContextManager({ budgetTokens: 50 });
    expect(() => tiny.compact(history)).toThrow(ContextBudgetExceeded);
    expect(() => tiny.compact(history)).toThrow(/phase 3/);
  });

  it("uses a custom estimator for the trigger, the event and the strategy", () => {
    const perMessage: TokenEstimator = (ms) => ms.length * 10;
    const m = new ContextManager({ budgetTokens: history.length * 10, estimateTokens: perMessage });
    expect(m.estimateTokens(history)).toBe(history.length * 10);
    const { messages, event } = m.compact(history);
    expect(event!.tokensBefore).toBe(history.length * 10);
    expect(event!.tokensAfter).toBe(messages.length * 10);
    // phase 1 drops 3 old step nudges (30 "tokens"), short of the 25% cut; phase 2 drops results too
    expect(event!.phaseReached).toBe(2);
  });

  it("fails loudly when a custom estimator answers something that is not a token count", () => {
    const m = new ContextManager({ budgetTokens: 100, estimateTokens: () => Number.NaN });
    expect(() => m.estimateTokens(history)).toThrow(InvalidArgumentError);
    expect(() => m.compact(history)).toThrow(/estimateTokens/);
  });

  it("validates its options, naming the bad field", () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ budgetTokens: 0 }, "budgetTokens"],
      [{ budgetTokens: 10.5 }, "budgetTokens"],
      [{ budgetTokens: "4096" }, "budgetTokens"],
      [{}, "budgetTokens"],
      [{ budgetTokens: 100, compactThreshold: 0 }, "compactThreshold"],
      [{ budgetTokens: 100, compactThreshold: 1.2 }, "compactThreshold"],
      [{ budgetTokens: 100, compactThreshold: Number.NaN }, "compactThreshold"],
      [{ budgetTokens: 100, strategy: {} }, "strategy"],
      [{ budgetTokens: 100, onCompact: "log" }, "onCompact"],
      [{ budgetTokens: 100, estimateTokens: 4 }, "estimateTokens"],
    ];
    for (const [options, field] of bad) {
      let caught: unknown;
      try {
        new ContextManager(options as never);
      } catch (e) {
        caught = e;
      }
      expect(caught, field).toBeInstanceOf(InvalidArgumentError);
      expect((caught as InvalidArgumentError).argument).toBe(field);
    }
    expect(() => new ContextManager(undefined as never)).toThrow(InvalidArgumentError);
  });
});
