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
 * One state object and an index: released text is never looked at again, a held span is read
 * only where the last delta left off (the closing scan is incremental).
 */
import { identEnd } from "./call-span.js";
import { CALL_NAME_KEYS, callMarkersFor, looksLikeToolCall, NAMED_VALUE, NAMED_VALUE_REACH } from "./call-markers.js";
import { skipWs } from "./json-scan.js";
import { findCallSpans } from "./rescue.js";

/** Tokens whose call span starts at them (or just before) though call-markers.ts does not list them. */
const SPAN_MARKERS = ["[ARGS]", "[CALL_ID]", "<|start|>", "<|channel|>"];
const FENCE = "```";
const ACTION = "Action:";
const FUNCTIONARY = ">>>";
// `"name"` seen, its `: "value"` not complete yet (the value may still turn out to name a tool).
const NAMED_VALUE_PREFIX = /^\s*(?::\s*(?:"[^"\\]{0,64})?)?$/;

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
}

/** A held construct that is judged once it closes. */
interface OpenSpan {
  start: number;
  /** Next position to read. */
  at: number;
  fence: boolean;
  depth: number;
  quote: string | undefined;
  escaped: boolean;
}

type Step = { kind: "none" } | { kind: "wait" } | { kind: "call" } | { kind: "span"; body: number; fence: boolean };

const NONE: Step = { kind: "none" };
const WAIT: Step = { kind: "wait" };
const CALL: Step = { kind: "call" };

/**
 * A tool name read backwards from a `[ARGS]` token would start at i (call-span.ts identStart:
 * digits, dots and dashes before it are skipped, a letter or `_` would join the name).
 */
function startsName(text: string, i: number): boolean {
  for (let k = i - 1; k >= 0 && /[A-Za-z0-9_.-]/.test(text[k]!); k--) if (/[A-Za-z_]/.test(text[k]!)) return false;
  return true;
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
  const markers = [...callMarkersFor(names), ...SPAN_MARKERS];
  // Rehearsal `name[ARGS]{…}` starts at the tool's name: held from a word that may become one.
  const wordMarkers = names.flatMap((n) => [`${n}[ARGS]`, `${n}[CALL_ID]`]);
  const first = new Set([...markers, ...CALL_NAME_KEYS, FENCE, ACTION, FUNCTIONARY, "{", "["].map((m) => m[0]!));
  const wordFirst = new Set(names.map((n) => n[0]!));

  let text = "";
  let rel = 0;
  let call = false;
  let open: OpenSpan | undefined;

  /** `text` from i is a proper prefix of `token` (the next delta decides). */
  const partial = (i: number, token: string) => text.length - i < token.length && token.startsWith(text.slice(i));

  function classify(i: number): Step {
    let waiting = false;
    for (const m of markers) {
      if (text.startsWith(m, i)) return CALL;
      waiting ||= partial(i, m);
    }
    if (startsName(text, i)) {
      for (const m of wordMarkers) {
        if (text.startsWith(m, i)) return CALL;
        waiting ||= partial(i, m);
      }
      const step = functionaryFirstLine(i);
      if (step !== NONE) return step;
    }
    for (const key of CALL_NAME_KEYS) {
      if (text.startsWith(key, i)) {
        const after = text.slice(i + key.length, i + key.length + NAMED_VALUE_REACH);
        const value = NAMED_VALUE.exec(after);
        if (value) {
          if (nameSet.has(value[1]!)) return CALL;
        } else if (after.length < NAMED_VALUE_REACH && NAMED_VALUE_PREFIX.test(after)) waiting = true;
      } else waiting ||= partial(i, key);
    }
    if (waiting) return WAIT;
    return construct(i);
  }

  /** Functionary's first call comes without `>>>`: `name\n{…}` as the answer's first line. */
  function functionaryFirstLine(i: number): Step {
    if (i !== skipWs(text, 0)) return NONE;
    for (const n of names) {
      const lead = `${n}\n`;
      if (text.startsWith(lead, i)) {
        const body = i + lead.length;
        if (body === text.length) return WAIT;
        return text[body] === "{" ? { kind: "span", body, fence: false } : NONE;
      }
      if (partial(i, lead)) return WAIT;
    }
    return NONE;
  }

  /** Openers of a construct judged when it closes. */
  function construct(i: number): Step {
    const c = text[i];
    if (c === "`") return text.startsWith(FENCE, i) ? { kind: "span", body: i + FENCE.length, fence: true } : partial(i, FENCE) ? WAIT : NONE;
    if (c === "A") return lead(i, ACTION, (j) => (text.startsWith(FENCE, j) ? { kind: "span", body: j + FENCE.length, fence: true } : partial(j, FENCE) ? WAIT : NONE));
    if (c === ">") {
      return lead(i, FUNCTIONARY, (j) => {
        const end = identEnd(text, j);
        if (end === j) return NONE;
        const brace = skipWs(text, end);
        if (brace === text.length) return WAIT;
        return text[brace] === "{" ? { kind: "span", body: brace, fence: false } : NONE;
      });
    }
    const next = skipWs(text, i + 1);
    if (c === "{") return next === text.length ? WAIT : text[next] === "\"" ? { kind: "span", body: i, fence: false } : NONE;
    if (c === "[") {
      // `items[f(x=1)]` indexes a collection: not a call list (the pythonic parser's own rule).
      if (/[\w\])]/.test(text[i - 1] ?? "")) return NONE;
      if (next === text.length) return WAIT;
      if (text[next] === "{") return { kind: "span", body: i, fence: false };
      const end = identEnd(text, next);
      if (end === next) return NONE;
      const paren = skipWs(text, end);
      if (paren === text.length) return WAIT;
      return text[paren] === "(" ? { kind: "span", body: i, fence: false } : NONE;
    }
    return NONE;
  }

  /** `token` (then whitespace) at i, then what `rest` makes of the text after it. */
  function lead(i: number, token: string, rest: (j: number) => Step): Step {
    if (!text.startsWith(token, i)) return partial(i, token) ? WAIT : NONE;
    const j = skipWs(text, i + token.length);
    return j === text.length ? WAIT : rest(j);
  }

  /** End of the open span once it has closed, else -1 (it stays open). */
  function close(span: OpenSpan): number {
    if (span.fence) {
      const at = text.indexOf(FENCE, span.at);
      if (at >= 0) return at + FENCE.length;
      span.at = Math.max(span.at, text.length - (FENCE.length - 1));
      return -1;
    }
    for (; span.at < text.length; span.at++) {
      const c = text[span.at]!;
      if (span.quote !== undefined) {
        if (span.escaped) span.escaped = false;
        else if (c === "\\") span.escaped = true;
        else if (c === span.quote) span.quote = undefined;
      } else if (c === "\"" || c === "'") span.quote = c;
      else if (c === "{" || c === "[" || c === "(") span.depth++;
      else if ((c === "}" || c === "]" || c === ")") && --span.depth === 0) return span.at + 1;
    }
    return -1;
  }

  function isCallAttempt(region: string): boolean {
    return looksLikeToolCall(region, names) || findCallSpans(region, nameSet).some((s) => s.calls.length > 0);
  }

  /** Release as far as the text is known to be prose. */
  function advance(): void {
    let known = rel;
    while (!call) {
      if (open !== undefined) {
        const end = close(open);
        if (end < 0) return hold(open.start);
        const region = text.slice(open.start, end);
        const start = open.start;
        open = undefined;
        if (isCallAttempt(region)) {
          call = true;
          return hold(start);
        }
        known = end;
        continue;
      }
      let i = known;
      for (; i < text.length; i++) {
        const c = text[i]!;
        if (!first.has(c) && !wordFirst.has(c)) continue;
        const step = classify(i);
        if (step.kind === "none") continue;
        if (step.kind === "call") call = true;
        else if (step.kind === "span") open = { start: i, at: step.body, fence: step.fence, depth: 0, quote: undefined, escaped: false };
        break;
      }
      if (open === undefined || i === text.length) return hold(i);
    }
  }

  /**
   * Release everything before `at` except the whitespace just before it: whitespace is only worth
   * sending with what follows it (prose before a call ends where the model's words end).
   */
  function hold(at: number): void {
    let end = at;
    while (end > rel && /\s/.test(text[end - 1]!)) end--;
    rel = end;
  }

  return {
    feed(delta: string): string {
      const from = rel;
      text += delta;
      advance();
      return text.slice(from, rel);
    },
    get text() {
      return text;
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
  };
}
