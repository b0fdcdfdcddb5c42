/** Context management: budgets, token estimation and compaction strategies. */
export { ContextManager, type CompactEvent, type ContextManagerOptions } from "./context-manager.js";
export type { CompactOptions, CompactResult, CompactStrategy } from "./compact-strategy.js";
export { NoCompact } from "./no-compact.js";
export { SlidingWindowCompact } from "./sliding-window-compact.js";
export { TieredCompact } from "./tiered-compact.js";
export {
  estimateMessageTokensChars4,
  estimateTokensChars4,
  MESSAGE_OVERHEAD_TOKENS,
  type TokenEstimator,
} from "./token-estimator.js";
