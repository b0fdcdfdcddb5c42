/**
 * Helpers shared by the hand-written stateful OG scenarios (stateful-og-*.ts): reading
 * `Label: value` lines out of tool results, checking what a free-text answer mentions, and
 * the two shapes most of their slips take (a whole wrong path, a single plain-text reply).
 * Kept apart from the plain scenarios on purpose: the stateful ones depend on none of them.
 */
import type { Oracle, OracleView, Slip } from "../scenario.js";
import { planOracle, Seen, unansweredTurns, type PlanStep } from "./oracle-kit.js";

/** What an answer says when the data it needed was never read: visibly wrong, never a guess. */
export const UNREAD = "unknown";

/**
 * The value of a `Label: value` line in the latest successful result of `tool` (labels match
 * case-insensitively), or `UNREAD` when no such result is visible. A "not found" result is a
 * success without the line, so an answer built on a miss says `unknown` and fails validation.
 *
 * @example fieldOf(seen, "get_country_info", "Capital") // "Paris"
 */
export function fieldOf(seen: Seen, tool: string, label: string): string {
  const line = new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\s*(.+?)\\s*$`, "im");
  for (const r of [...seen.successes(tool)].reverse()) {
    const m = line.exec(r.content);
    if (m) return m[1]!;
  }
  return UNREAD;
}

/** Lower-cased, commas dropped, so "1,500" reads as "1500" (as forge's check reads answers). */
// The answer checks are the plain scenarios' (forge's `_check`): one definition for both.
export { mentionsAll, mentionsAny } from "./answer-text.js";

/**
 * The model has not yet answered a turn with plain text. Every call it makes gets a result on
 * the tool channel (a blocked or refused call too), while a plain-text reply gets a retry
 * nudge on the user channel, which the view does not list; so one more assistant turn than
 * results means a text reply happened. A text-reply slip uses this to fire once: a real model
 * told "reply with a tool call" mostly does. (A profile fault that already answered in text
 * also turns it off: the slip then does not happen in that run.)
 *
 * @example { when: (v) => noTextReplyYet(v) && new Seen(v.results).tried("onboarding_records"), step: ... }
 */
export function noTextReplyYet(view: OracleView): boolean {
  return unansweredTurns(view) === 0;
}

/**
 * Some call of `tool` came back with a result (not a tool error, a refusal or a blocked call).
 *
 * @example answered(view, "get_records") // true once the records came back
 */
export function answered(view: OracleView, tool: string): boolean {
  return new Seen(view.results).succeeded(tool);
}

/**
 * A slip that replaces the whole path: while it is active the model plays `steps` instead of
 * the oracle, from the first turn to its terminal call (a decoy record read, a wrong value
 * carried through). Whatever the guardrails, that path ends in an answer `validate` rejects.
 *
 * @example wrongPath("decoy_country", 0.01, [{ tool: "get_country_info", args: () => ({ country: "Japan" }) }, summary])
 */
export function wrongPath(name: string, rate: number, steps: readonly PlanStep[]): Slip {
  const path: Oracle = planOracle(steps);
  return { name, rate, when: () => true, step: path };
}
