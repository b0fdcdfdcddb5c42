/**
 * gpt-oss Harmony: `<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{…}<|call|>`
 * (the recipient may also sit before the channel: `<|start|>assistant to=functions.x<|channel|>commentary json<|message|>…`).
 * Servers drop the final `<|call|>` stop token, so complete JSON after <|message|> also ends a call.
 * The analysis channel is reasoning and is split off by think.ts before this runs.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, jsonThenCloser, makeCall } from "./call-span.js";
import { argsFromText, decodeArgs } from "./call-object.js";
import { decodeJsonSpan, nextFinder } from "./json-scan.js";

const TO = "to=functions.";
const MESSAGE = "<|message|>";
const CALL = "<|call|>";
const HEADER_MAX = 256;

export function parseHarmony(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const findTo = nextFinder(text, TO);
  const findMessage = nextFinder(text, MESSAGE);
  const findCall = nextFinder(text, CALL);
  const findStart = nextFinder(text, "<|start|>");
  const findEnd = nextFinder(text, "<|end|>");
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const at = findTo(pos);
    if (at < 0) break;
    pos = at + TO.length;
    const nameEnd = identEnd(text, pos);
    if (nameEnd === pos) continue;
    const tool = text.slice(pos, nameEnd);
    const msg = findMessage(nameEnd);
    if (msg < 0 || msg - nameEnd > HEADER_MAX || /<\|(?:end|call|start|return)\|>/.test(text.slice(nameEnd, msg))) continue;
    const bodyStart = msg + MESSAGE.length;
    const call = findCall(bodyStart);
    const boundary = Math.min(...[findStart(bodyStart), findEnd(bodyStart)].map((x) => (x < 0 ? text.length : x)));
    let args: unknown;
    let end: number;
    const read = jsonThenCloser(ctx, bodyStart, CALL);
    if (read) {
      args = decodeArgs(decodeJsonSpan(text, read.start, read.valueEnd));
      end = read.end;
    } else if (call >= 0 && call <= boundary) {
      args = argsFromText(text.slice(bodyStart, call));
      end = call + CALL.length;
    } else continue;
    spans.push({ start: headerStart(text, at), end, calls: [makeCall(tool, args)] });
    pos = end;
  }
  return spans;
}

/** The `<|start|>` (or `<|channel|>`) opening this message's header, when it is close by. */
function headerStart(text: string, to: number): number {
  const from = Math.max(0, to - HEADER_MAX);
  const window = text.slice(from, to);
  const cut = Math.max(window.lastIndexOf("<|end|>"), window.lastIndexOf(MESSAGE), window.lastIndexOf(CALL));
  for (const token of ["<|start|>", "<|channel|>"]) {
    const k = window.lastIndexOf(token);
    if (k >= 0 && k > cut) return from + k;
  }
  return to;
}
