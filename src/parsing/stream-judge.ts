/**
 * The streaming judge: one incremental classifier over an answer's content deltas (the shape of
 * vLLM's hermes_tool_parser `extract_tool_calls_streaming` and llama.cpp's partial parser). Prose
 * is released as it arrives; text is held only from a position that MAY open a call in one of
 * the rescue formats, until that span is known:
 *
 * - a call marker (call-markers.ts, plus the tokens some spans start before: `[ARGS]`, `<|start|>`
 *   …) or a `"name": "<offered tool>"` member → a call attempt: everything from there is held to
 *   the end of the answer, which the proxy-request machine then judges whole, as it always did;
 * - a code fence, a JSON object/array, a pythonic `[name(` list, Functionary's `>>>name {` or a
 *   Command-R `Action: ```` → held until it closes, then the rescue parsers and looksLikeToolCall
 *   decide: a call attempt holds the rest, prose is released and judging goes on after it;
 * - the start of any of these at the end of the buffer (`<tool_` may become `<tool_call>`) → only
 *   that suffix is held, until the next delta decides.
 *
 * Linear in the answer, however it is split: the text is a code-unit buffer (stream-text.ts), not
 * a growing string V8 would flatten on every delta; the prose scan resumes where it stopped, a
 * held span's closing scan where the last delta left off (stream-span.ts), and each closed span
 * is judged once. What a construct waiting at the end of the text reads again on the next delta
 * is bounded (a marker's length, NAMED_VALUE_REACH) or resumed (stream-runs.ts; the whitespace
 * before a held position). `work` counts it all.
 */
import { isIdentPart } from "./call-span.js";
import { CALL_NAME_KEYS, callMarkersFor, looksLikeToolCall, NAMED_VALUE, NAMED_VALUE_REACH } from "./call-markers.js";
import { findCallSpans } from "./rescue.js";
import { StreamRuns } from "./stream-runs.js";
import { closeSpan, openSpan, type OpenSpan } from "./stream-span.js";
import { StreamText } from "./stream-text.js";

/** Tokens whose call span starts at them (or just before) though call-markers.ts does not list them. */
const SPAN_MARKERS = ["[ARGS]", "[CALL_ID]", "<|start|>", "<|channel|>"];
const FENCE = "```";
const BACKTICK = 0x60;
const ACTION = "Action:";
const FUNCTIONARY = ">>>";
// `"name"` seen, its `: "value"` not complete yet (the value may still turn out to name a tool).
const NAMED_VALUE_PREFIX = /^\s*(?::\s*(?:"[^"\\]{0,64})?)?$/;
const SPACE = /\s/;

export interface StreamJudge {
  /** Add the next content delta; returns the text that is safe to show now (may be ""). */
  feed(delta: string): string;
  /** Everything fed so far. */
  readonly text: string;
  /** The prefix of `text` released so far. */
  readonly released: string;
  /** The rest of `text`: held until it is known (released + held === text). */
  readonly held: string;
  /** A call attempt was seen: the rest of the answer is held for the whole-answer judgement. */
  readonly holdingCall: boolean;
  /** The work done so far, in characters, for tests and benchmarks that hold it linear. */
  readonly work: StreamJudgeWork;
}

export interface StreamJudgeWork {
  /** Code units the judge read: copied in, scanned, compared, re-read, sliced out. */
  readonly examined: number;
  /** Characters of closed spans handed to the rescue parsers (each span once; never more than the text). */
  readonly judged: number;
}

type Step = { kind: "none" } | { kind: "wait" } | { kind: "call" } | { kind: "span"; body: number; fence: boolean };

const NO_TOKENS: readonly string[] = [];
const NONE: Step = { kind: "none" };
const WAIT: Step = { kind: "wait" };
const CALL: Step = { kind: "call" };

/** `/\s/` on one code unit (what `hold` trims), without building a string for ASCII. */
function isSpace(c: number): boolean {
  return c < 0x80 ? c === 0x20 || (c >= 0x09 && c <= 0x0d) : SPACE.test(String.fromCharCode(c));
}

/** `/[\w\])]/`: a character after which `[` indexes something (`items[f(x=1)]`). */
function indexes(c: number): boolean {
  return (isIdentPart(c) && c !== 0x2e && c !== 0x2d) || c === 0x5d || c === 0x29;
}

/** Tokens by their first code unit: only those can start (or be cut short) at a position. */
function byFirstUnit(tokens: readonly string[]): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const t of tokens) {
    const group = groups.get(t.charCodeAt(0));
    if (group) group.push(t);
    else groups.set(t.charCodeAt(0), [t]);
  }
  return groups;
}

/**
 * @example
 * const judge = createStreamJudge({ toolNames: ["get_weather"] });
 * judge.feed("Let me check. <tool");  // "Let me check. "
 * judge.feed("_call>{\"name\": ");    // "" (a call: held to the end)
 * judge.holdingCall;                  // true
 */
export function createStreamJudge(options: { toolNames: readonly string[] }): StreamJudge {
  const names = [...options.toolNames];
  const nameSet = new Set(names);
  const markers = byFirstUnit([...callMarkersFor(names), ...SPAN_MARKERS]);
  // Rehearsal `name[ARGS]{…}` starts at the tool's name: held from a word that may become one.
  const wordMarkers = byFirstUnit(names.flatMap((n) => [`${n}[ARGS]`, `${n}[CALL_ID]`]));
  // Functionary's first line `name\n`, in the tools' order (the first that matches decides).
  const firstLines = byFirstUnit(names.map((n) => `${n}\n`));
  const nameKeys = byFirstUnit(CALL_NAME_KEYS);
  const first = new Set([...markers.keys(), ...nameKeys.keys(), ...[FENCE, ACTION, FUNCTIONARY, "{", "["].map((m) => m.charCodeAt(0))]);
  const wordFirst = new Set(names.map((n) => n.charCodeAt(0)));

  const text = new StreamText();
  let rel = 0;
  // [rel, blank) is known to be whitespace: `hold` never walks back over it twice.
  let blank = 0;
  // The prose scan resumes here: every position before it is released, in a judged span, or was
  // classified "none" (which more text never changes).
  let scanAt = 0;
  let call = false;
  let open: OpenSpan | undefined;
  let judged = 0;

  const runs = new StreamRuns(text);

  function classify(i: number): Step {
    runs.moveTo(i);
    const c = text.code(i);
    let waiting = false;
    for (const m of markers.get(c) ?? NO_TOKENS) {
      if (text.startsWith(m, i)) return CALL;
      waiting ||= text.endsInside(m, i);
    }
    if (runs.startsName(i)) {
      for (const m of wordMarkers.get(c) ?? NO_TOKENS) {
        if (text.startsWith(m, i)) return CALL;
        waiting ||= text.endsInside(m, i);
      }
      const step = functionaryFirstLine(i, c);
      if (step !== NONE) return step;
    }
    for (const key of nameKeys.get(c) ?? NO_TOKENS) {
      if (text.startsWith(key, i)) {
        const after = text.slice(i + key.length, i + key.length + NAMED_VALUE_REACH);
        const value = NAMED_VALUE.exec(after);
        if (value) {
          if (nameSet.has(value[1]!)) return CALL;
        } else if (after.length < NAMED_VALUE_REACH && NAMED_VALUE_PREFIX.test(after)) waiting = true;
      } else waiting ||= text.endsInside(key, i);
    }
    if (waiting) return WAIT;
    return construct(i, c);
  }

  /** Functionary's first call comes without `>>>`: `name\n{…}` as the answer's first line. */
  function functionaryFirstLine(i: number, c: number): Step {
    if (i !== runs.lead()) return NONE;
    for (const line of firstLines.get(c) ?? NO_TOKENS) {
      if (text.startsWith(line, i)) {
        const body = i + line.length;
        if (body === text.length) return WAIT;
        return text.code(body) === 0x7b ? { kind: "span", body, fence: false } : NONE;
      }
      if (text.endsInside(line, i)) return WAIT;
    }
    return NONE;
  }

  const fenceAt = (j: number): Step => (text.startsWith(FENCE, j) ? { kind: "span", body: j + FENCE.length, fence: true } : text.endsInside(FENCE, j) ? WAIT : NONE);

  /** Openers of a construct judged when it closes. */
  function construct(i: number, c: number): Step {
    if (c === BACKTICK) return fenceAt(i);
    if (c === 0x41 /* A */) return leadBy(i, ACTION, fenceAt);
    if (c === 0x3e /* > */) {
      return leadBy(i, FUNCTIONARY, (j) => {
        const end = runs.identEnd(j);
        if (end === j) return NONE;
        const brace = runs.skipWs(end);
        if (brace === text.length) return WAIT;
        return text.code(brace) === 0x7b ? { kind: "span", body: brace, fence: false } : NONE;
      });
    }
    if (c === 0x7b /* { */) {
      const next = runs.skipWs(i + 1);
      return next === text.length ? WAIT : text.code(next) === 0x22 ? { kind: "span", body: i, fence: false } : NONE;
    }
    if (c === 0x5b /* [ */) {
      // `items[f(x=1)]` indexes a collection: not a call list (the pythonic parser's own rule).
      if (i > 0 && indexes(text.code(i - 1))) return NONE;
      const next = runs.skipWs(i + 1);
      if (next === text.length) return WAIT;
      if (text.code(next) === 0x7b) return { kind: "span", body: i, fence: false };
      const end = runs.identEnd(next);
      if (end === next) return NONE;
      const paren = runs.skipWs(end);
      if (paren === text.length) return WAIT;
      return text.code(paren) === 0x28 ? { kind: "span", body: i, fence: false } : NONE;
    }
    return NONE;
  }

  /** `token` (then whitespace) at i, then what `rest` makes of the text after it. */
  function leadBy(i: number, token: string, rest: (j: number) => Step): Step {
    if (!text.startsWith(token, i)) return text.endsInside(token, i) ? WAIT : NONE;
    const j = runs.skipWs(i + token.length);
    return j === text.length ? WAIT : rest(j);
  }

  function isCallAttempt(region: string): boolean {
    return looksLikeToolCall(region, names) || findCallSpans(region, nameSet).some((s) => s.calls.length > 0);
  }

  /** Release as far as the text is known to be prose. */
  function advance(): void {
    while (!call) {
      if (open !== undefined) {
        const end = closeSpan(text, open);
        if (end < 0) return hold(open.start);
        const start = open.start;
        open = undefined;
        const region = text.slice(start, end);
        judged += region.length;
        if (isCallAttempt(region)) {
          call = true;
          return hold(start);
        }
        scanAt = end;
        continue;
      }
      let i = scanAt;
      for (; i < text.length; i++) {
        const c = text.code(i);
        if (!first.has(c) && !wordFirst.has(c)) continue;
        const step = classify(i);
        if (step.kind === "none") continue;
        if (step.kind === "call") call = true;
        else if (step.kind === "span") open = openSpan(i, step.body, step.fence);
        break;
      }
      scanAt = i;
      if (open === undefined || i === text.length) return hold(i);
    }
  }

  /**
   * Release everything before `at` except the whitespace just before it: whitespace is only worth
   * sending with what follows it (prose before a call ends where the model's words end).
   */
  function hold(at: number): void {
    if (at <= blank) return;
    let end = at;
    while (end > blank && isSpace(text.code(end - 1))) end--;
    if (end > blank) rel = end;
    blank = at;
  }

  return {
    feed(delta: string): string {
      // Nothing new: the judgement already made stands (advance is idempotent on the same text).
      if (delta === "") return "";
      const from = rel;
      text.append(delta);
      advance();
      return text.slice(from, rel);
    },
    get text() {
      return text.slice(0, text.length);
    },
    get released() {
      return text.slice(0, rel);
    },
    get held() {
      return text.slice(rel);
    },
    get holdingCall() {
      return call;
    },
    get work() {
      return { examined: text.examined, judged };
    },
  };
}
