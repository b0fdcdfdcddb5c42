/** Three-phase compaction with the seed's priority table (seed 002, "Compaction Strategy Choice"). */
import { createMessage, MessageRole, MessageType, NUDGE_TYPES, type Message } from "../core/messages.js";
import type { CompactOptions, CompactResult, CompactStrategy } from "./compact-strategy.js";
import {
  headEndIndex,
  isProtectedMessage,
  isRecentMessage,
  recentWindowStart,
  validateKeepRecent,
  validateTriggerTokens,
} from "./history-window.js";
import { estimateMessageTokensChars4, estimateTokensChars4, MESSAGE_OVERHEAD_TOKENS } from "./token-estimator.js";

/** What each phase does to one message outside the protected head and the recent window. */
const Fate = {
  Keep: 0, // protected, recent, tool_call: never cut
  Nudge: 1, // dropped from phase 1
  Result: 2, // truncated in phase 1, dropped from phase 2
  Thought: 3, // reasoning / text_response: dropped in phase 3
  Summary: 4, // never cut; replaced in phase 3 when a step hint is given
} as const;
type Fate = (typeof Fate)[keyof typeof Fate];

function fateOf(m: Message, index: number, windowStart: number): Fate {
  const t = m.meta.type;
  if (t === MessageType.SUMMARY) return Fate.Summary;
  if (isProtectedMessage(m, index) || isRecentMessage(m, index, windowStart)) return Fate.Keep;
  if (NUDGE_TYPES.has(t)) return Fate.Nudge;
  if (t === MessageType.TOOL_RESULT) return Fate.Result;
  if (t === MessageType.REASONING || t === MessageType.TEXT_RESPONSE) return Fate.Thought;
  return Fate.Keep;
}

/**
 * Default strategy. Outside the `keepRecent` latest iterations (grouped by `meta.stepIndex`):
 *
 * | phase | nudges (step, prerequisite, retry) | tool_result              | reasoning, text_response |
 * |-------|------------------------------------|--------------------------|--------------------------|
 * | 1     | dropped                            | first 200 chars + marker | kept                     |
 * | 2     | dropped                            | dropped                  | kept                     |
 * | 3     | dropped                            | dropped                  | dropped                  |
 *
 * tool_call messages, the system prompt, user inputs, summaries and the recent window are never
 * cut. Phases run in order and stop at the first whose estimate is ≤ `triggerTokens` (phase 0
 * when the input already is). Phase 3 also writes one `summary` message (role system) right
 * after the first user input carrying `stepHint`, replacing any earlier summary, unless that
 * would make the history longer than the input. Truncated results keep type `tool_result` and
 * get `meta.originalType = "tool_result"`, which marks them so they are never truncated twice:
 * compacting a compacted history again changes nothing.
 *
 * Dropping a tool_result whose tool_call is kept leaves a call id without an answer in the
 * history; that is intended (the call is the control-flow record) and the serializers and
 * clients send such histories as they are.
 *
 * Input messages are never mutated; kept messages are the same objects as in the input.
 *
 * @example
 * const tiered = new TieredCompact({ keepRecent: 2 });
 * const { messages, phase } = tiered.compact(history, 3000, { stepHint: "[Steps completed: search]" });
 */
export class TieredCompact implements CompactStrategy {
  static readonly TRUNCATE_CHARS = 200;
  readonly name = "tiered";
  readonly keepRecent: number;

  constructor(options: { keepRecent?: number } = {}) {
    this.keepRecent = validateKeepRecent(options.keepRecent, 2);
  }

  compact(messages: readonly Message[], triggerTokens: number, options: CompactOptions = {}): CompactResult {
    const trigger = validateTriggerTokens(triggerTokens);
    const estimate = options.estimateTokens ?? estimateTokensChars4;
    const windowStart = recentWindowStart(messages, this.keepRecent);
    const n = messages.length;
    const fates = new Uint8Array(n);
    // Characters each eligible result keeps when truncated (0 = left whole); the truncated
    // messages themselves are only built if phase 1 is the answer.
    const keeps = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const m = messages[i]!;
      const fate = fateOf(m, i, windowStart);
      fates[i] = fate;
      if (fate === Fate.Result) keeps[i] = truncationKeep(m);
    }
    const build = (phase: number, summary?: Message) => buildPhase(messages, fates, keeps, phase, summary);

    // With the default (additive) estimator every phase total is derived from per-message
    // costs computed once; a custom estimator is called once per phase that is needed.
    let phaseTokens: (phase: number) => number;
    let summaryFits: (summary: Message, withSummary: () => Message[]) => boolean;
    let before: number;
    if (estimate === estimateTokensChars4) {
      const t = additiveTotals(messages, fates, keeps);
      before = t.before;
      phaseTokens = (p) => t.phase[p - 1]!;
      summaryFits = (s) => t.phase[2]! - t.summaries + estimateMessageTokensChars4(s) <= t.before;
    } else {
      before = estimate(messages);
      phaseTokens = (p) => estimate(build(p));
      summaryFits = (_s, withSummary) => estimate(withSummary()) <= before;
    }

    if (before <= trigger) return { messages: messages.slice(), phase: 0 };
    if (phaseTokens(1) <= trigger) return { messages: build(1), phase: 1 };
    if (phaseTokens(2) <= trigger) return { messages: build(2), phase: 2 };
    const hint = options.stepHint?.trim();
    if (hint) {
      const summary = createMessage(MessageRole.SYSTEM, hint, MessageType.SUMMARY);
      let cached: Message[] | undefined;
      const withSummary = () => (cached ??= build(3, summary));
      if (summaryFits(summary, withSummary)) return { messages: withSummary(), phase: 3 };
    }
    return { messages: build(3), phase: 3 };
  }
}

const marker = (removed: number) => `\n[Truncated — ${removed} chars removed]`;

/**
 * How many leading characters a truncated copy of this result keeps, or 0 when it stays whole:
 * already truncated (marked by `originalType`), or too short for the marker to save anything.
 */
function truncationKeep(m: Message): number {
  if (m.meta.originalType === MessageType.TOOL_RESULT) return 0;
  const length = m.content.length;
  let keep = TieredCompact.TRUNCATE_CHARS;
  if (length <= keep) return 0;
  const last = m.content.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1; // do not split a surrogate pair
  return keep + marker(length - keep).length < length ? keep : 0;
}

/** The first `keep` characters + "\n[Truncated — N chars removed]", marked as truncated. */
function truncateToolResult(m: Message, keep: number): Message {
  const { tokenEstimate: _stale, ...meta } = m.meta;
  const content = m.content.slice(0, keep) + marker(m.content.length - keep);
  return { ...m, content, meta: { ...meta, originalType: MessageType.TOOL_RESULT } };
}

/** Token cost of the truncated copy, computed without building it when the text is just the content. */
function truncatedCost(m: Message, keep: number): number {
  if (m.toolCalls?.length) return estimateMessageTokensChars4(truncateToolResult(m, keep));
  return Math.ceil((keep + marker(m.content.length - keep).length) / 4) + MESSAGE_OVERHEAD_TOKENS;
}

function buildPhase(
  messages: readonly Message[],
  fates: Uint8Array,
  keeps: Uint32Array,
  phase: number,
  summary: Message | undefined,
): Message[] {
  const head = summary ? headEndIndex(messages) : -1;
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    switch (fates[i] as Fate) {
      case Fate.Nudge:
        break;
      case Fate.Result:
        if (phase === 1) out.push(keeps[i] ? truncateToolResult(m, keeps[i]!) : m);
        break;
      case Fate.Thought:
        if (phase < 3) out.push(m);
        break;
      case Fate.Summary:
        if (!summary) out.push(m);
        break;
      default:
        out.push(m);
    }
    if (i === head && summary) out.push(summary);
  }
  return out;
}

function additiveTotals(
  messages: readonly Message[],
  fates: Uint8Array,
  keeps: Uint32Array,
): { before: number; phase: [number, number, number]; summaries: number } {
  let before = 0;
  let nudges = 0;
  let truncSaved = 0;
  let results = 0;
  let thoughts = 0;
  let summaries = 0;
  for (let i = 0; i < messages.length; i++) {
    const cost = estimateMessageTokensChars4(messages[i]!);
    before += cost;
    switch (fates[i] as Fate) {
      case Fate.Nudge:
        nudges += cost;
        break;
      case Fate.Result: {
        results += cost;
        const keep = keeps[i]!;
        if (keep) truncSaved += cost - truncatedCost(messages[i]!, keep);
        break;
      }
      case Fate.Thought:
        thoughts += cost;
        break;
      case Fate.Summary:
        summaries += cost;
        break;
      default:
        break;
    }
  }
  const p2 = before - nudges - results;
  return { before, phase: [before - nudges - truncSaved, p2, p2 - thoughts], summaries };
}
