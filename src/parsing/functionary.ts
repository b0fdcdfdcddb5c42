/**
 * Functionary v3.2: `>>>get_weather\n{"city": "Paris"}` (several in a row for parallel calls;
 * `>>>all\n…` is the plain-text channel). Functionary v3.1's `<function=name>{…}</function>` is
 * read by qwen-coder.ts, which shares that tag.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, makeCall } from "./call-span.js";
import { decodeArgs } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

const MARK = ">>>";

export function parseFunctionary(ctx: ScanContext): CallSpan[] {
  const { text, json } = ctx;
  const find = nextFinder(text, MARK);
  const spans: CallSpan[] = [];
  let pos = 0;
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
