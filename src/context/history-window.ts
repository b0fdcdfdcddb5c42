/**
 * Which messages of a history compaction may touch. Shared by the built-in strategies so they
 * agree on what "protected" and "recent" mean.
 *
 * - Protected (never cut): messages[0] (the system prompt), every `system_prompt`, every
 *   `user_input` (the first one per the seed; later ones too, because they are the human's own
 *   words in a multi-turn history) and every `summary` (TieredCompact phase 3 rewrites it).
 * - Recent: unprotected messages whose `meta.stepIndex` is among the `keepRecent` largest
 *   distinct step indexes of the unprotected messages. A parallel batch (one tool_call with N
 *   calls + N tool_results) shares one stepIndex, so it is one iteration.
 * - Everything else is eligible, including unprotected messages without a stepIndex.
 *
 * Step indexes are compared by value: a multi-turn history whose earlier turn used larger
 * indexes than the current one would keep the earlier turn as "recent".
 */
import { MessageType, type Message } from "../core/messages.js";
import { InvalidArgumentError } from "../core/errors.js";

/**
 * @example
 * isProtectedMessage(messages[0], 0); // true: the system prompt is never cut
 */
export function isProtectedMessage(message: Message, index: number): boolean {
  if (index === 0) return true;
  const t = message.meta.type;
  return t === MessageType.SYSTEM_PROMPT || t === MessageType.USER_INPUT || t === MessageType.SUMMARY;
}

/**
 * The smallest stepIndex inside the recent window: unprotected messages with
 * `stepIndex >= cutoff` are recent. `-Infinity` when there are at most `keepRecent`
 * iterations (all stepped messages are recent); `Infinity` when `keepRecent` is 0.
 * One pass plus a top-k insertion (k = keepRecent is small), so linear in the history.
 *
 * @example
 * const cutoff = recentStepCutoff(messages, 2);
 * const recent = messages.filter((m) => isRecentMessage(m, cutoff));
 */
export function recentStepCutoff(messages: readonly Message[], keepRecent: number): number {
  if (keepRecent === 0) return Number.POSITIVE_INFINITY;
  const top: number[] = []; // distinct values, descending, at most keepRecent long
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const s = m.meta.stepIndex;
    if (s === undefined || isProtectedMessage(m, i)) continue;
    if (top.length === keepRecent && s <= top[keepRecent - 1]!) continue;
    let pos = 0;
    while (pos < top.length && top[pos]! > s) pos++;
    if (top[pos] === s) continue;
    top.splice(pos, 0, s);
    if (top.length > keepRecent) top.pop();
  }
  return top.length < keepRecent ? Number.NEGATIVE_INFINITY : top[keepRecent - 1]!;
}

/**
 * @example
 * isRecentMessage(message, recentStepCutoff(messages, 2));
 */
export function isRecentMessage(message: Message, cutoff: number): boolean {
  const s = message.meta.stepIndex;
  return s !== undefined && s >= cutoff;
}

/**
 * Where protected context ends: the first user_input, or messages[0] when there is none.
 *
 * @example
 * headEndIndex([systemPrompt, userInput, toolCall]); // 1: a summary goes right after it
 */
export function headEndIndex(messages: readonly Message[]): number {
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]!.meta.type === MessageType.USER_INPUT) return i;
  }
  return 0;
}

/**
 * `keepRecent` must be a non-negative integer; a bad one names itself.
 *
 * @example
 * this.keepRecent = validateKeepRecent(options.keepRecent, 2);
 */
export function validateKeepRecent(value: unknown, fallback: number): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw new InvalidArgumentError("keepRecent", `must be a non-negative integer (iterations), got ${String(v)}`);
  }
  return v;
}

/**
 * `triggerTokens` must be a finite number ≥ 0.
 *
 * @example
 * const trigger = validateTriggerTokens(triggerTokens);
 */
export function validateTriggerTokens(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError("triggerTokens", `must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}
