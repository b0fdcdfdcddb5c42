/**
 * The contract every compaction strategy implements (seed 000, "Compaction Strategy").
 * Strategies are pure: they return a new list and never mutate the messages they are given.
 */
import type { Message } from "../core/messages.js";
import type { TokenEstimator } from "./token-estimator.js";

/**
 * The compacted history and how far the strategy went: 0 = nothing applied, 1+ is
 * strategy-defined (TieredCompact: 1–3).
 *
 * @example
 * const { messages, phase } = new TieredCompact().compact(history, 3000);
 */
export interface CompactResult {
  messages: Message[];
  phase: number;
}

/**
 * @example
 * strategy.compact(history, 3000, { stepHint: "[Steps completed: search]" });
 */
export interface CompactOptions {
  /** The step tracker's hint (e.g. "[Steps completed: a, b]"); TieredCompact phase 3 keeps it. */
  stepHint?: string;
  /** How to count tokens when checking a phase against the trigger; defaults to chars/4. */
  estimateTokens?: TokenEstimator;
}

/**
 * @example
 * const keepLastTwo: CompactStrategy = new SlidingWindowCompact({ keepRecent: 2 });
 * const { messages } = keepLastTwo.compact(history, manager.triggerTokens);
 */
export interface CompactStrategy {
  /** Shown in CompactEvent.strategy and logs. */
  readonly name: string;
  /**
   * `triggerTokens` is the threshold that started compaction. Phased strategies check each
   * phase's result against it before escalating; it is not a target to cut down to.
   */
  compact(messages: readonly Message[], triggerTokens: number, options?: CompactOptions): CompactResult;
}
