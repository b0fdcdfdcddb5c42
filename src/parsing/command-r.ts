/**
 * Cohere Command-R / R+: "Action: ```json\n[{"tool_name": …, "parameters": {…}}]\n```" and
 * Command R7B: `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": {…}}]<|END_ACTION|>`.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { callsFromValue } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

const ACTION = "Action:";
const START = "<|START_ACTION|>";
const END = "<|END_ACTION|>";

export function parseCommandR(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  const findAction = nextFinder(text, ACTION);
  let pos = 0;
  while (true) {
    const at = findAction(pos);
    if (at < 0) break;
    pos = at + ACTION.length;
    let i = skipWs(text, pos);
    if (!text.startsWith("```", i)) continue;
    i += 3;
    if (text.startsWith("json", i)) i += 4;
    const found = readCalls(ctx, skipWs(text, i));
    if (!found) continue;
    const after = skipWs(text, found.end);
    const end = text.startsWith("```", after) ? after + 3 : found.end;
    spans.push({ start: at, end, calls: found.calls });
    pos = end;
  }
  const findStart = nextFinder(text, START);
  pos = 0;
  while (true) {
    const at = findStart(pos);
    if (at < 0) break;
    pos = at + START.length;
    const found = readCalls(ctx, skipWs(text, pos));
    if (!found) continue;
    const after = skipWs(text, found.end);
    const end = text.startsWith(END, after) ? after + END.length : found.end;
    spans.push({ start: at, end, calls: found.calls });
    pos = end;
  }
  return spans;
}

function readCalls(ctx: ScanContext, start: number) {
  const end = ctx.json.valueEnd(start);
  if (end < 0) return undefined;
  const calls = callsFromValue(decodeJsonSpan(ctx.text, start, end), false);
  return calls ? { end, calls } : undefined;
}
