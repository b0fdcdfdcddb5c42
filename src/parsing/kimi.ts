/**
 * Kimi-K2 tool-call sections:
 * `<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>`.
 * The call id (`functions.get_weather:0`) is kept as `id`; the tool is the part between
 * "functions." and ":index".
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { jsonThenCloser, makeCall } from "./call-span.js";
import { argsFromText, decodeArgs } from "./call-object.js";
import { decodeJsonSpan, nextFinder } from "./json-scan.js";

const BEGIN = "<|tool_call_begin|>";
const ARG = "<|tool_call_argument_begin|>";
const END = "<|tool_call_end|>";

export function parseKimi(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const findBegin = nextFinder(text, BEGIN);
  const findEnd = nextFinder(text, END);
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const begin = findBegin(pos);
    if (begin < 0) break;
    const bodyStart = begin + BEGIN.length;
    const arg = text.slice(bodyStart, bodyStart + 256).indexOf(ARG);
    const id = arg < 0 ? "" : text.slice(bodyStart, bodyStart + arg).trim();
    const tool = kimiToolName(id);
    const argsStart = bodyStart + arg + ARG.length;
    const read = tool && arg >= 0 ? jsonThenCloser(ctx, argsStart, END) : undefined;
    if (tool && read?.closed) {
      spans.push({ start: begin, end: read.end, calls: [makeCall(tool, decodeArgs(decodeJsonSpan(text, read.start, read.valueEnd)), id)] });
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
    const calls = tool && arg >= 0 && argsStart <= end ? [makeCall(tool, argsFromText(text.slice(argsStart, end)), id)] : [];
    spans.push({ start: begin, end: end + END.length, calls });
    pos = end + END.length;
  }
  return spans;
}

/** `functions.get_weather:0` → `get_weather`; undefined when the id has no usable name. */
export function kimiToolName(id: string): string | undefined {
  const m = /^(?:functions\.)?([A-Za-z_][A-Za-z0-9_.-]*?)(?::\d+)?$/.exec(id);
  return m?.[1];
}
