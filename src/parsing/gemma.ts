/**
 * Gemma's call syntax, in two spellings:
 * - Gemma 4: `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3,units:{metric:true}}<tool_call|>`
 * - FunctionGemma (Gemma 3 270M): `<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>`
 * The body is `{key:value,…}` with bare keys; strings sit between quote tokens (`<|"|>`,
 * `<escape>`) so they may hold any character; numbers, booleans and null are bare; objects and
 * arrays nest with the same rules. JSON-quoted strings and bare words (FunctionGemma's
 * `path:/tmp/a.txt`) are read too. One block is one span.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, makeCall } from "./call-span.js";
import { nextFinder } from "./json-scan.js";

const DIALECTS = [
  { open: "<|tool_call>", close: "<tool_call|>", quote: '<|"|>' },
  { open: "<start_function_call>", close: "<end_function_call>", quote: "<escape>" },
];
const CALL = "call:";

export function parseGemma(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  for (const d of DIALECTS) {
    const findOpen = nextFinder(text, d.open);
    const findClose = nextFinder(text, d.close);
    let pos = 0;
    while (true) {
      const open = findOpen(pos);
      if (open < 0) break;
      const bodyStart = open + d.open.length;
      const read = readCall(text, bodyStart, d.quote);
      // The end tag is looked for after the call, so a quoted "<tool_call|>" cannot cut it short.
      const close = findClose(read ? read.end : bodyStart);
      if (close < 0) break;
      const nextOpen = findOpen(bodyStart);
      if (!read && nextOpen >= 0 && nextOpen < close) {
        pos = nextOpen;
        continue;
      }
      const calls = read && text.slice(read.end, close).trim() === "" ? [makeCall(read.name, read.args)] : [];
      spans.push({ start: open, end: close + d.close.length, calls });
      pos = close + d.close.length;
    }
  }
  return spans;
}

function readCall(text: string, pos: number, quote: string): { name: string; args: Record<string, unknown>; end: number } | undefined {
  let i = skipSpace(text, pos);
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
        obj[key] = v.value;
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
