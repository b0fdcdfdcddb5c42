/**
 * DeepSeek tool-call tokens (fullwidth bars "｜" U+FF5C and "▁" U+2581; the "_" spelling and
 * the ASCII-bar `<|tool▁call▁begin|>` spelling that R1 distills emit are accepted too):
 * - V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`
 * - V3.1 / V3.2: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`
 * R1 distills also drop parts of the V3 header: the per-call begin token, as llama.cpp also
 * accepts (`function<｜tool▁sep｜>NAME\n```json…`, read only when its JSON and the end token
 * follow), or the `function` type (`<｜tool▁call▁begin｜><｜tool▁sep｜>NAME`). The section tokens
 * (`<｜tool▁calls▁begin｜>` and its distill spellings) are framing: rescue.ts strips them.
 * V3.2's DSML markup is read by invoke-xml.ts.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, jsonThenCloser, makeCall } from "./call-span.js";
import { argsFromText, decodeArgs } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

const tok = (words: string, sep: string, bar: string) => `<${bar}${words.split(" ").join(sep)}${bar}>`;
// ASCII bars only with "▁": `<|tool_call_begin|>` is Kimi's token, not DeepSeek's.
const SPELLINGS = [
  ["▁", "｜"],
  ["_", "｜"],
  ["▁", "|"],
].map(([sep, bar]) => ({
  begin: tok("tool call begin", sep!, bar!),
  sep: tok("tool sep", sep!, bar!),
  end: tok("tool call end", sep!, bar!),
}));

export function parseDeepSeek(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  for (const t of SPELLINGS) {
    const findBegin = nextFinder(text, t.begin);
    const findEnd = nextFinder(text, t.end);
    let pos = 0;
    while (true) {
      const begin = findBegin(pos);
      if (begin < 0) break;
      const bodyStart = begin + t.begin.length;
      const read = readJsonCall(ctx, bodyStart, t);
      if (read) {
        spans.push({ start: begin, end: read.end, calls: [read.call] });
        pos = read.end;
        continue;
      }
      // Not JSON: the end token delimits the raw args (kept raw for the validator to reject).
      const end = findEnd(bodyStart);
      const nextBegin = findBegin(bodyStart);
      if (end < 0 || (nextBegin >= 0 && nextBegin < end)) {
        pos = bodyStart;
        continue;
      }
      const header = readHeader(text, bodyStart, t.sep);
      const calls = header && header.argsAt <= end ? [makeCall(header.name, argsFromText(stripFence(text.slice(header.argsAt, end))))] : [];
      spans.push({ start: begin, end: end + t.end.length, calls });
      pos = end + t.end.length;
    }
    spans.push(...headersWithoutBegin(ctx, t));
  }
  return spans;
}

/** `function<sep>NAME` + JSON (fenced or not) + end token, with no begin token before it (R1 distills). */
function headersWithoutBegin(ctx: ScanContext, t: Spelling): CallSpan[] {
  const head = `function${t.sep}`;
  const find = nextFinder(ctx.text, head);
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const at = find(pos);
    if (at < 0) break;
    // After a begin token this header was read above; the rescuer keeps the earlier, longer span.
    const read = readJsonCall(ctx, at, t);
    if (read) spans.push({ start: at, end: read.end, calls: [read.call] });
    pos = read ? read.end : at + head.length;
  }
  return spans;
}

/** `function<sep>NAME\n` (V3/R1), `NAME<sep>` (V3.1) or `<sep>NAME`: the tool name and where its args begin. */
function readHeader(text: string, pos: number, sep: string): { name: string; argsAt: number } | undefined {
  if (text.startsWith(sep, pos)) {
    // `<sep>NAME`: the distill dropped the `function` type.
    const nameEnd = identEnd(text, pos + sep.length);
    return nameEnd === pos + sep.length ? undefined : { name: text.slice(pos + sep.length, nameEnd), argsAt: nameEnd };
  }
  const leftEnd = identEnd(text, pos);
  if (leftEnd === pos || !text.startsWith(sep, leftEnd)) return undefined;
  const left = text.slice(pos, leftEnd);
  const after = leftEnd + sep.length;
  if (left !== "function") return { name: left, argsAt: after };
  const nameEnd = identEnd(text, after);
  if (nameEnd === after) return undefined;
  return { name: text.slice(after, nameEnd), argsAt: nameEnd };
}

type Spelling = (typeof SPELLINGS)[number];

function readJsonCall(ctx: ScanContext, pos: number, t: Spelling) {
  const { text } = ctx;
  const header = readHeader(text, pos, t.sep);
  if (!header) return undefined;
  let i = skipWs(text, header.argsAt);
  const fenced = text.startsWith("```", i);
  if (fenced) i = text.startsWith("```json", i) ? i + 7 : i + 3;
  const read = jsonThenCloser(ctx, i, fenced ? "```" : t.end);
  if (!read || !read.closed) return undefined;
  let end = read.end;
  if (fenced) {
    const after = skipWs(text, end);
    if (!text.startsWith(t.end, after)) return undefined;
    end = after + t.end.length;
  }
  return { end, call: makeCall(header.name, decodeArgs(decodeJsonSpan(text, read.start, read.valueEnd))) };
}

function stripFence(raw: string): string {
  let s = raw.trim();
  if (s.startsWith("```")) {
    const nl = s.indexOf("\n");
    s = nl < 0 ? "" : s.slice(nl + 1);
    if (s.trimEnd().endsWith("```")) s = s.trimEnd().slice(0, -3);
  }
  return s.trim() === "" ? "{}" : s;
}
