/**
 * Any violation blocks the whole batch (seed 000, 3e.2): the offending calls get their own
 * message and every other call gets a `[Skipped]` result, so each call id is answered once.
 */
import { batchSkippedMessage } from "./nudges.js";

/** One tool-channel result for a call that did not run. */
export interface BlockedResult {
  index: number;
  tool: string;
  content: string;
}

/**
 * @example
 * blockedBatchResults([{ tool: "a" }, { tool: "b" }], new Map([[1, "[PrereqError] ..."]]));
 * // [{ index: 0, tool: "a", content: "[Skipped] ..." }, { index: 1, tool: "b", content: "[PrereqError] ..." }]
 */
export function blockedBatchResults(calls: readonly { tool: string }[], offending: ReadonlyMap<number, string>): BlockedResult[] {
  return calls.map((call, index) => ({ index, tool: call.tool, content: offending.get(index) ?? batchSkippedMessage(call.tool) }));
}
