/**
 * Pythonic calls (Llama 3.2 / Llama 4, also Llama 4's `<|python_start|>…<|python_end|>`):
 * `[get_weather(city="Paris", days=2), get_time(tz=None)]`. Keyword arguments only — a positional
 * argument has no name to bind, so such a list is not read as a call. The list must be bracketed:
 * a bare `f(x=1)` in prose is far more often an illustration than a call, and so is a subscript
 * `items[f(x=1)]` (a "[" right after a word character, "]" or ")").
 */
import type { ToolCall } from "../core/llm.js";
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd } from "./call-span.js";
import { skipWs } from "./json-scan.js";
import { PyReader } from "./python-literal.js";

export function parsePythonic(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  let i = text.indexOf("[");
  while (i >= 0) {
    const list = readCallList(text, i);
    if (list) {
      spans.push({ start: i, end: list.end, calls: list.calls });
      i = text.indexOf("[", list.end);
    } else i = text.indexOf("[", i + 1);
  }
  return spans;
}

function readCallList(text: string, start: number): { end: number; calls: ToolCall[] } | undefined {
  // `results[get_weather(city="x")]` indexes a collection (code in prose), it is not a call list.
  if (start > 0 && /[\w\])]/.test(text.charAt(start - 1))) return undefined;
  // Cheap gate before any real parsing: "[" then an identifier then "(".
  const nameStart = skipWs(text, start + 1);
  const nameEnd = identEnd(text, nameStart);
  if (nameEnd === nameStart || text.charAt(nameEnd) !== "(") return undefined;
  const r = new PyReader(text, start + 1);
  const calls: ToolCall[] = [];
  while (!r.eat("]")) {
    const call = r.call();
    if (!call) return undefined;
    calls.push(call);
    if (!r.eat(",") && r.peek() !== "]") return undefined;
  }
  return { end: r.pos, calls };
}
