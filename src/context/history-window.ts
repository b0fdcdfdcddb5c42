/**
 * Which messages of a history compaction may touch. Shared by the built-in strategies so they
 * agree on what "protected" and "recent" mean.
 *
 * - Protected (never cut): messages[0] (the system prompt), every `system_prompt`, every
 *   `user_input` (the first one per the seed; later ones too, because they are the human's own
 *   words in a multi-turn history) and every `summary` (TieredCompact phase 3 rewrites it).
 * - Recent: unprotected messages of the `keepRecent` latest iterations, counted from the END of
 *   the history. An iteration is a contiguous run of unprotected messages sharing one
 *   `meta.stepIndex` (a parallel batch — one tool_call with N calls + N tool_results — is one
 *   iteration); a protected message (e.g. a later user_input) ends a run.
 * - Everything else is eligible, including unprotected messages without a stepIndex.
 *
 * Position, not the stepIndex value, decides recency: a multi-turn history restarts stepIndex at
 * 0 for every run, so an earlier turn may carry larger indexes than the current one, and the
 * current turn's latest iterations must still be the ones kept.
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
 * Index where the recent window starts: unprotected messages with a stepIndex at or after it
 * are recent (see isRecentMessage). `messages.length` when `keepRecent` is 0. One backward
 * pass, so linear in the history.
 *
 * @example
 * const start = recentWindowStart(messages, 2);
 * const recent = messages.filter((m, i) => isRecentMessage(m, i, start));
 */
export function recentWindowStart(messages: readonly Message[], keepRecent: number): number {
  let start = messages.length;
  if (keepRecent === 0) return start;
  let runs = 0;
  let current: number | undefined; // stepIndex of the run being walked
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (isProtectedMessage(m, i)) {
      current = undefined;
      continue;
    }
    const s = m.meta.stepIndex;
    if (s === undefined) continue;
    if (s !== current) {
      if (runs === keepRecent) break;
      runs++;
      current = s;
    }
    start = i;
  }
  return start;
}

/**
 * @example
 * isRecentMessage(messages[i], i, recentWindowStart(messages, 2));
 */
export function isRecentMessage(message: Message, index: number, windowStart: number): boolean {
  return index >= windowStart && message.meta.stepIndex !== undefined;
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
