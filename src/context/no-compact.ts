/** Passthrough strategy (seed 000, "NoCompact"). */
import type { Message } from "../core/messages.js";
import type { CompactResult, CompactStrategy } from "./compact-strategy.js";

/**
 * Keeps the whole history. Use when VRAM is abundant or workflows are short; a ContextManager
 * with this strategy still throws ContextBudgetExceeded once the hard budget is passed.
 *
 * @example
 * const manager = new ContextManager({ strategy: new NoCompact(), budgetTokens: 32_000 });
 */
export class NoCompact implements CompactStrategy {
  readonly name = "none";

  compact(messages: readonly Message[], _triggerTokens: number): CompactResult {
    return { messages: messages.slice(), phase: 0 };
  }
}
