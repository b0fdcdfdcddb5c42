/** Sliding window strategy (seed 000, "SlidingWindowCompact"). */
import type { Message } from "../core/messages.js";
import type { CompactResult, CompactStrategy } from "./compact-strategy.js";
import { isProtectedMessage, isRecentMessage, recentWindowStart, validateKeepRecent } from "./history-window.js";

/**
 * Keeps the protected head (system prompt, user inputs, summaries) and the last `keepRecent`
 * iterations, grouped by `meta.stepIndex` so a parallel batch counts as one iteration; drops
 * everything else. Structural, so it ignores the trigger. Phase 1 when anything was dropped,
 * else 0.
 *
 * @example
 * const strategy = new SlidingWindowCompact({ keepRecent: 3 });
 * const { messages, phase } = strategy.compact(history, 3000);
 */
export class SlidingWindowCompact implements CompactStrategy {
  readonly name = "sliding";
  readonly keepRecent: number;

  constructor(options: { keepRecent?: number } = {}) {
    this.keepRecent = validateKeepRecent(options.keepRecent, 3);
  }

  compact(messages: readonly Message[], _triggerTokens: number): CompactResult {
    const windowStart = recentWindowStart(messages, this.keepRecent);
    const out: Message[] = [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (isProtectedMessage(m, i) || isRecentMessage(m, i, windowStart)) out.push(m);
    }
    return { messages: out, phase: out.length < messages.length ? 1 : 0 };
  }
}
