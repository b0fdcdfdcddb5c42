/**
 * Functionary v3.2: `>>>get_weather\n{"city": "Paris"}` (several in a row for parallel calls;
 * `>>>all\n…` is the plain-text channel). The template's generation prompt already ends in
 * `>>>`, so the first call often arrives without it: `get_weather\n{"city": "Paris"}` at the very
 * start of the reply (a name alone on the first line, a JSON object on the next). Functionary v3.1's `<function=name>{…}</function>` is
 * read by qwen-coder.ts, which shares that tag.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, makeCall } from "./call-span.js";
import { callFromValue, decodeArgs } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

const MARK = ">>>";

export function parseFunctionary(ctx: ScanContext): CallSpan[] {
  const { text, json } = ctx;
  const find = nextFinder(text, MARK);
  const spans: CallSpan[] = [];
  let pos = 0;
  const first = firstCallWithoutMark(ctx);
  if (first) {
    spans.push(first);
    pos = first.end;
  }
  while (true) {
    const at = find(pos);
    if (at < 0) break;
    pos = at + MARK.length;
    const nameEnd = identEnd(text, pos);
    if (nameEnd === pos) continue;
    const name = text.slice(pos, nameEnd);
    if (name === "all") continue;
    const start = skipWs(text, nameEnd);
    if (text.charCodeAt(start) !== 0x7b) continue;
    const end = json.valueEnd(start);
    if (end < 0) continue;
    spans.push({ start: at, end, calls: [makeCall(name, decodeArgs(decodeJsonSpan(text, start, end)))] });
    pos = end;
  }
  return spans;
}

/** `name\n{…}` as the reply's first line, naming a tool on offer: only then is it a call. */
function firstCallWithoutMark(ctx: ScanContext): CallSpan | undefined {
  const { text, json } = ctx;
  const start = skipWs(text, 0);
  const nameEnd = identEnd(text, start);
  if (nameEnd === start || text.charAt(nameEnd) !== "\n") return undefined;
  const name = text.slice(start, nameEnd);
  if (!ctx.tools?.has(name)) return undefined;
  const open = nameEnd + 1;
  if (text.charCodeAt(open) !== 0x7b) return undefined;
  const end = json.valueEnd(open);
  if (end < 0) return undefined;
  const value = decodeJsonSpan(text, open, end);
  // `{"name": …, "arguments": …}` under a heading is a JSON call of its own, read by json-calls.ts.
  if (callFromValue(value, true)) return undefined;
  return { start, end, calls: [makeCall(name, decodeArgs(value))] };
}
