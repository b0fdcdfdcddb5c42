/** Context budgeting and compaction triggering (seed 000, "Context Manager"). */
import { CallbackError, ContextBudgetExceeded, InvalidArgumentError } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import type { CompactStrategy } from "./compact-strategy.js";
import { TieredCompact } from "./tiered-compact.js";
import { estimateTokensChars4, type TokenEstimator } from "./token-estimator.js";

/**
 * What one compaction did; JSON-safe so the machine can emit it and snapshots can keep it.
 *
 * @example
 * new ContextManager({ budgetTokens: 8192, onCompact: (e) =>
 *   console.log(`step ${e.stepIndex}: ${e.tokensBefore} → ${e.tokensAfter} (phase ${e.phaseReached})`) });
 */
export interface CompactEvent {
  stepIndex: number;
  tokensBefore: number;
  tokensAfter: number;
  budgetTokens: number;
  messagesBefore: number;
  messagesAfter: number;
  phaseReached: number;
  strategy: string;
}

/**
 * @example
 * const options: ContextManagerOptions = { budgetTokens: 8192, compactThreshold: 0.75 };
 */
export interface ContextManagerOptions {
  /** Defaults to `new TieredCompact()`. */
  strategy?: CompactStrategy;
  /** The hard ceiling: a history still above it after compaction is an error. */
  budgetTokens: number;
  /** Fraction of the budget above which compaction runs, in (0, 1]; default 0.75. */
  compactThreshold?: number;
  onCompact?: (event: CompactEvent) => void;
  /** Defaults to {@link estimateTokensChars4}. */
  estimateTokens?: TokenEstimator;
}

/**
 * Owns the budget and the trigger; the strategy owns what gets cut.
 *
 * @example
 * const manager = new ContextManager({ budgetTokens: 8192, onCompact: (e) => log(e) });
 * messages = manager.maybeCompact(messages, iteration, tracker.summaryHint());
 * // or, without callbacks (the workflow machine):
 * const { messages: next, event } = manager.compact(messages, { stepIndex: iteration });
 */
export class ContextManager {
  readonly budgetTokens: number;
  readonly compactThreshold: number;
  readonly strategy: CompactStrategy;
  readonly #onCompact: ((event: CompactEvent) => void) | undefined;
  readonly #estimate: TokenEstimator;

  constructor(options: ContextManagerOptions) {
    if (typeof options !== "object" || options === null) {
      throw new InvalidArgumentError("options", "must be an object with at least budgetTokens");
    }
    const { budgetTokens, compactThreshold = 0.75, strategy, onCompact, estimateTokens } = options;
    if (typeof budgetTokens !== "number" || !Number.isSafeInteger(budgetTokens) || budgetTokens <= 0) {
      throw new InvalidArgumentError("budgetTokens", `must be a positive integer, got ${String(budgetTokens)}`);
    }
    if (typeof compactThreshold !== "number" || !(compactThreshold > 0 && compactThreshold <= 1)) {
      throw new InvalidArgumentError("compactThreshold", `must be a number in (0, 1], got ${String(compactThreshold)}`);
    }
    if (strategy !== undefined && (typeof strategy !== "object" || strategy === null || typeof strategy.compact !== "function")) {
      throw new InvalidArgumentError("strategy", "must implement CompactStrategy (a compact(messages, triggerTokens) method)");
    }
    if (onCompact !== undefined && typeof onCompact !== "function") {
      throw new InvalidArgumentError("onCompact", "must be a function (event: CompactEvent) => void");
    }
    if (estimateTokens !== undefined && typeof estimateTokens !== "function") {
      throw new InvalidArgumentError("estimateTokens", "must be a function (messages) => number");
    }
    this.budgetTokens = budgetTokens;
    this.compactThreshold = compactThreshold;
    this.strategy = strategy ?? new TieredCompact();
    this.#onCompact = onCompact;
    this.#estimate = estimateTokens ?? estimateTokensChars4;
  }

  /** Estimates above this run the strategy: `floor(budgetTokens * compactThreshold)`. */
  get triggerTokens(): number {
    return Math.floor(this.budgetTokens * this.compactThreshold);
  }

  /**
   * The trigger in `estimateTokensChars4` units, or null when a custom estimator counts: a
   * caller that keeps a chars4 running total (the workflow machine) can tell from it alone that
   * `compact` would return the history unchanged.
   */
  get chars4Trigger(): number | null {
    return this.#estimate === estimateTokensChars4 ? this.triggerTokens : null;
  }

  /**
   * The configured estimator's count; a custom estimator answering a non-number fails loudly.
   * `chars4Tokens`: `estimateTokensChars4(messages)` when the caller keeps it as a running total
   * (the workflow machine does); a manager on the default estimator answers with it instead of
   * re-estimating the whole history. Others ignore it.
   */
  estimateTokens(messages: readonly Message[], options: { chars4Tokens?: number | undefined } = {}): number {
    if (options.chars4Tokens !== undefined && this.#estimate === estimateTokensChars4) return options.chars4Tokens;
    const tokens = this.#estimate(messages);
    if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) {
      throw new InvalidArgumentError("estimateTokens", `returned ${String(tokens)}; it must return a finite number >= 0`);
    }
    return tokens;
  }

  /**
   * Primitive used by the workflow machine: returns the event (and also reports it to
   * `onCompact`, so a callback given to the manager fires whichever surface runs it).
   * At or under the trigger the input array itself comes back (treat it as read-only) with no
   * event. Over it, the strategy runs; `event` is set when it applied a phase (≥ 1).
   * `chars4Tokens` as in {@link estimateTokens}: with a running total the check costs O(1).
   * @throws ContextBudgetExceeded when the result is still over `budgetTokens`.
   */
  compact(
    messages: readonly Message[],
    options: { stepIndex?: number; stepHint?: string; chars4Tokens?: number | undefined } = {},
  ): { messages: Message[]; event: CompactEvent | null } {
    const tokensBefore = this.estimateTokens(messages, { chars4Tokens: options.chars4Tokens });
    if (tokensBefore <= this.triggerTokens) return { messages: messages as Message[], event: null };
    const result = this.strategy.compact(messages, this.triggerTokens, {
      estimateTokens: this.#estimate,
      ...(options.stepHint !== undefined ? { stepHint: options.stepHint } : {}),
    });
    const tokensAfter = this.estimateTokens(result.messages);
    if (tokensAfter > this.budgetTokens) {
      throw new ContextBudgetExceeded(tokensAfter, this.budgetTokens, result.phase);
    }
    if (result.phase < 1) return { messages: result.messages, event: null };
    const event: CompactEvent = {
      stepIndex: options.stepIndex ?? 0,
      tokensBefore,
      tokensAfter,
      budgetTokens: this.budgetTokens,
      messagesBefore: messages.length,
      messagesAfter: result.messages.length,
      phaseReached: result.phase,
      strategy: this.strategy.name,
    };
    if (this.#onCompact) {
      try {
        this.#onCompact(event);
      } catch (error) {
        // User code: the run fails with a CallbackError naming it, like the runner's callbacks.
        throw new CallbackError("onCompact", error);
      }
    }
    return { messages: result.messages, event };
  }

  /**
   * Seed API: the (possibly) compacted history; `onCompact` is called when compaction fired.
   * It is not called when ContextBudgetExceeded is thrown (the error carries the estimate and phase).
   */
  maybeCompact(messages: readonly Message[], stepIndex = 0, stepHint = ""): Message[] {
    return this.compact(messages, { stepIndex, stepHint }).messages;
  }
}
