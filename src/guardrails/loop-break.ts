/**
 * Loop break: the same tool with the same arguments may run at most `maxToolRepeat` times in a
 * run; a further identical call gets a `[LoopBreak]` tool error instead of executing. Counts live
 * in plain JSON (`callCounts`) keyed by `callKey`.
 */
import { canonicalJson } from "./canonical-json.js";

export const DEFAULT_MAX_TOOL_REPEAT = 3;

/**
 * Canonical key of a call: tool name plus key-sorted JSON of its args.
 *
 * @example
 * callKey("search", { q: "x", n: 1 }) === callKey("search", { n: 1, q: "x" }); // true
 */
export function callKey(tool: string, args: unknown): string {
  return `${tool}:${canonicalJson(args)}`;
}

/**
 * True when the call with this key has already run `maxToolRepeat` times, i.e. running it again
 * would be the (max+1)th identical call.
 *
 * @example
 * isRepeatExceeded({ [callKey("a", {})]: 3 }, callKey("a", {}), 3); // true
 */
export function isRepeatExceeded(counts: Readonly<Record<string, number>>, key: string, maxToolRepeat: number): boolean {
  return (counts[key] ?? 0) >= maxToolRepeat;
}

/** A call of the batch that would exceed the repeat limit; `count` is how often it already ran. */
export interface RepeatViolation {
  index: number;
  tool: string;
  count: number;
}

/**
 * Check a whole batch, counting identical calls earlier in the same batch as if they had run.
 *
 * @example
 * findRepeatViolations([{ tool: "a", args: {} }, { tool: "a", args: {} }], { [callKey("a", {})]: 2 }, 3);
 * // [{ index: 1, tool: "a", count: 3 }]
 */
export function findRepeatViolations(
  calls: readonly { tool: string; args: unknown }[],
  counts: Readonly<Record<string, number>>,
  maxToolRepeat: number,
  /** `callKey` of each call, when the caller already has them. */
  keys: readonly string[] = calls.map((c) => callKey(c.tool, c.args)),
): RepeatViolation[] {
  // Counts added by this batch live beside the run's record: copying the record would make
  // every check cost as much as the whole run's history of distinct calls.
  const inBatch = new Map<string, number>();
  const violations: RepeatViolation[] = [];
  calls.forEach((call, index) => {
    const key = keys[index]!;
    const count = (Object.hasOwn(counts, key) ? counts[key]! : 0) + (inBatch.get(key) ?? 0);
    if (count >= maxToolRepeat) violations.push({ index, tool: call.tool, count });
    else inBatch.set(key, (inBatch.get(key) ?? 0) + 1);
  });
  return violations;
}

/**
 * New counts with one more run of each executed call (the input is not modified).
 *
 * @example
 * countCalls({}, [{ tool: "a", args: { x: 1 } }]); // { 'a:{"x":1}': 1 }
 */
export function countCalls(
  counts: Readonly<Record<string, number>>,
  executed: readonly { tool: string; args: unknown }[],
): Record<string, number> {
  const next: Record<string, number> = { ...counts };
  for (const call of executed) {
    const key = callKey(call.tool, call.args);
    next[key] = (next[key] ?? 0) + 1;
  }
  return next;
}
