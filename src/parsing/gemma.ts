/**
 * Gemma's call syntax, in two spellings:
 * - Gemma 4: `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3,units:{metric:true}}<tool_call|>`
 *   (usually followed by the `<|tool_response>` stop token; several calls are concatenated)
 * - FunctionGemma (Gemma 3 270M): `<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>`
 * The body is `{key:value,…}` with bare keys; strings sit between quote tokens (`<|"|>`,
 * `<escape>`) so they may hold any character; numbers, booleans and null are bare; objects and
 * arrays nest with the same rules. JSON-quoted strings and bare words (FunctionGemma's
 * `path:/tmp/a.txt`) are read too. One block is one span.
 * Gemma 4 slips seen in the wild (vLLM's gemma4 parser accepts them too): `<turn|>` instead of
 * `<tool_call|>`, the end token missing at the end of the reply, `<|tool_call>:call:`, and a
 * bare `call:NAME{…}` on a line of its own (often right after the thought channel) — that last
 * one only for a tool on offer, since without the start token it is not markup.
 * Gemma 3 has no call tokens; Google's function-calling guide has it answer in a ```tool_code
 * fence holding Python calls (`get_weather(city="Paris")`, one a line), read here too.
 */
import type { ToolCall } from "../core/llm.js";
import { setOwn } from "../core/set-own.js";
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, makeCall } from "./call-span.js";
import { nextFinder } from "./json-scan.js";
import { PyReader } from "./python-literal.js";

const DIALECTS = [
  { open: "<|tool_call>", closers: ["<tool_call|>", "<turn|>"], quote: '<|"|>' },
  { open: "<start_function_call>", closers: ["<end_function_call>"], quote: "<escape>" },
];
const CALL = "call:";
const GEMMA4_QUOTE = DIALECTS[0]!.quote;

export function parseGemma(ctx: ScanContext): CallSpan[] {
  return [...DIALECTS.flatMap((d) => tagged(ctx, d)), ...bareCalls(ctx), ...toolCodeFences(ctx)];
}

function tagged(ctx: ScanContext, d: (typeof DIALECTS)[number]): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  const findOpen = nextFinder(text, d.open);
  const finders = d.closers.map((c) => ({ find: nextFinder(text, c), len: c.length }));
  // The nearest end token at or after pos (searched after the call, so a quoted one cannot cut it short).
  const findClose = (pos: number) => {
    let best: { at: number; len: number } | undefined;
    for (const f of finders) {
      const at = f.find(pos);
      if (at >= 0 && (!best || at < best.at)) best = { at, len: f.len };
    }
    return best;
  };
  let pos = 0;
  while (true) {
    const open = findOpen(pos);
    if (open < 0) break;
    const bodyStart = open + d.open.length;
    const read = readCall(text, bodyStart, d.quote);
    const nextOpen = findOpen(bodyStart);
    if (read) {
      const after = skipSpace(text, read.end);
      const closer = d.closers.find((c) => text.startsWith(c, after));
      if (closer || after === text.length || after === nextOpen) {
        // Closed, or the end token was eaten (end of reply, or the next call starts right away).
        const end = closer ? after + closer.length : read.end;
        spans.push({ start: open, end, calls: [makeCall(read.name, read.args)] });
        pos = end;
        continue;
      }
    }
    const close = findClose(read ? read.end : bodyStart);
    if (!close) break;
    if (nextOpen >= 0 && nextOpen < close.at) {
      pos = nextOpen; // this block never closed; the next one might
      continue;
    }
    // Closed markup that is not a readable call (or has junk after it) still claims its text.
    spans.push({ start: open, end: close.at + close.len, calls: [] });
    pos = close.at + close.len;
  }
  return spans;
}

/** `call:NAME{…}` alone on its line, naming a tool on offer, with Gemma 4 string tokens or none. */
function bareCalls(ctx: ScanContext): CallSpan[] {
  const { text, tools } = ctx;
  if (!tools || tools.size === 0) return [];
  const spans: CallSpan[] = [];
  const find = nextFinder(text, CALL);
  let pos = 0;
  while (true) {
    const at = find(pos);
    if (at < 0) break;
    pos = at + CALL.length;
    const lineStart = text.lastIndexOf("\n", at - 1) + 1;
    if (text.slice(lineStart, at).trim() !== "") continue;
    const read = readCall(text, at, GEMMA4_QUOTE);
    if (!read || !tools.has(read.name)) continue;
    const lineEnd = text.indexOf("\n", read.end);
    if (text.slice(read.end, lineEnd < 0 ? text.length : lineEnd).trim() !== "") continue;
    spans.push({ start: at, end: read.end, calls: [makeCall(read.name, read.args)] });
    pos = read.end;
  }
  return spans;
}

/** Gemma 3: ```tool_code fences whose whole body is keyword-argument Python calls. */
function toolCodeFences(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const OPEN = "```tool_code";
  const findOpen = nextFinder(text, OPEN);
  const findFence = nextFinder(text, "```");
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const open = findOpen(pos);
    if (open < 0) break;
    const close = findFence(open + OPEN.length);
    if (close < 0) break;
    const calls = pythonCalls(text, open + OPEN.length, close);
    if (calls) spans.push({ start: open, end: close + 3, calls });
    pos = close + 3;
  }
  return spans;
}

/** `name(k=v, …)` calls separated by newlines (or `;`) filling text[from, to); undefined otherwise. */
function pythonCalls(text: string, from: number, to: number): ToolCall[] | undefined {
  const r = new PyReader(text, from);
  const calls: ToolCall[] = [];
  while (true) {
    r.ws();
    if (r.pos >= to) break;
    if (text.charAt(r.pos) === ";") {
      r.pos++;
      continue;
    }
    const call = r.call();
    // A call that reads past the fence is not inside it.
    if (!call || r.pos > to) return undefined;
    calls.push(call);
  }
  return calls.length > 0 ? calls : undefined;
}

function readCall(text: string, pos: number, quote: string): { name: string; args: Record<string, unknown>; end: number } | undefined {
  let i = skipSpace(text, pos);
  if (text.startsWith(":" + CALL, i)) i++; // `<|tool_call>:call:` (a stray colon)
  if (!text.startsWith(CALL, i)) return undefined;
  i += CALL.length;
  const nameEnd = identEnd(text, i);
  if (nameEnd === i) return undefined;
  const value = new GemmaValueReader(text, quote).read(nameEnd, true);
  if (!value || typeof value.value !== "object" || value.value === null || Array.isArray(value.value)) return undefined;
  return { name: text.slice(i, nameEnd), args: value.value as Record<string, unknown>, end: value.end };
}

function skipSpace(text: string, pos: number): number {
  let i = pos;
  while (i < text.length && /\s/.test(text.charAt(i))) i++;
  return i;
}

/** Recursive reader for Gemma values; undefined on anything it cannot read whole. */
class GemmaValueReader {
  private depth = 0;
  constructor(
    private readonly text: string,
    private readonly quote: string,
  ) {}

  read(pos: number, objectOnly = false): { value: unknown; end: number } | undefined {
    const { text, quote } = this;
    const i = skipSpace(text, pos);
    const c = text.charAt(i);
    if (c === "{") return this.container(i, "}", true);
    if (objectOnly) return undefined;
    if (c === "[") return this.container(i, "]", false);
    if (text.startsWith(quote, i)) {
      const end = text.indexOf(quote, i + quote.length);
      return end < 0 ? undefined : { value: text.slice(i + quote.length, end), end: end + quote.length };
    }
    if (c === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i, i + 100_000));
      if (!m) return undefined;
      try {
        return { value: JSON.parse(m[0]) as string, end: i + m[0].length };
      } catch {
        return undefined;
      }
    }
    // A bare scalar: up to the next separator at this level.
    let end = i;
    while (end < text.length && !",}]".includes(text.charAt(end)) && !text.startsWith(quote, end)) end++;
    const word = text.slice(i, end).trim();
    if (word === "") return undefined;
    return { value: scalar(word), end };
  }

  private container(start: number, closer: string, object: boolean): { value: unknown; end: number } | undefined {
    if (++this.depth > 64) return undefined; // hostile nesting: not a call
    const { text, quote } = this;
    const out: unknown[] = [];
    const obj: Record<string, unknown> = {};
    let i = skipSpace(text, start + 1);
    if (text.charAt(i) === closer) {
      this.depth--;
      return { value: object ? obj : out, end: i + 1 };
    }
    while (i < text.length) {
      if (object) {
        let key: string;
        if (text.startsWith(quote, i)) {
          const end = text.indexOf(quote, i + quote.length);
          if (end < 0) return undefined;
          key = text.slice(i + quote.length, end);
          i = end + quote.length;
        } else if (text.charAt(i) === '"') {
          const end = text.indexOf('"', i + 1);
          if (end < 0) return undefined;
          key = text.slice(i + 1, end);
          i = end + 1;
        } else {
          const end = identEnd(text, i);
          if (end === i) return undefined;
          key = text.slice(i, end);
          i = end;
        }
        i = skipSpace(text, i);
        if (text.charAt(i) !== ":") return undefined;
        const v = this.read(i + 1);
        if (!v) return undefined;
        setOwn(obj, key, v.value);
        i = v.end;
      } else {
        const v = this.read(i);
        if (!v) return undefined;
        out.push(v.value);
        i = v.end;
      }
      i = skipSpace(text, i);
      if (text.charAt(i) === ",") {
        i = skipSpace(text, i + 1);
        continue;
      }
      if (text.charAt(i) === closer) {
        this.depth--;
        return { value: object ? obj : out, end: i + 1 };
      }
      return undefined;
    }
    return undefined;
  }
}

function scalar(word: string): unknown {
  if (word === "true" || word === "false") return word === "true";
  if (word === "null") return null;
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) return Number(word);
  return word;
}
