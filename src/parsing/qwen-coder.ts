/**
 * Qwen3-Coder calls: `<tool_call>\n<function=name>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>`.
 * One newline after the opening and before the closing parameter tag is layout, not value; the
 * rest follows tagged-value.ts. A missing </parameter> ends at the next <parameter= (as vLLM does).
 * `<function=name>{json}</function>` (Functionary v3.1 / Llama style) reads the JSON as args.
 * The <tool_call> wrapper is optional: Qwen3-Coder sometimes drops it.
 */
import type { ToolCall } from "../core/llm.js";
import { setOwn } from "../core/set-own.js";
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, makeCall, makeTextCall } from "./call-span.js";
import { argsFromText } from "./call-object.js";
import { nextFinder } from "./json-scan.js";
import { decodeTaggedValue } from "./tagged-value.js";

const FN_OPEN = "<function=";
const FN_CLOSE = "</function>";
const P_OPEN = "<parameter=";
const P_CLOSE = "</parameter>";

/** Bare `<function=…>…</function>` blocks anywhere in the text. */
export function parseQwenCoder(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const findOpen = nextFinder(text, FN_OPEN);
  const findClose = nextFinder(text, FN_CLOSE);
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const open = findOpen(pos);
    if (open < 0) break;
    const close = findClose(open);
    if (close < 0) break;
    const nextOpen = findOpen(open + 1);
    if (nextOpen >= 0 && nextOpen < close) {
      pos = nextOpen; // this block never closed; the next one might
      continue;
    }
    const call = parseFunctionBlock(text.slice(open, close));
    if (call) spans.push({ start: open, end: close + FN_CLOSE.length, calls: [call] });
    pos = close + FN_CLOSE.length;
  }
  return spans;
}

/** Parse `<function=name>…` (without the closing </function>); undefined if malformed. */
export function parseFunctionBlock(block: string): ToolCall | undefined {
  if (!block.startsWith(FN_OPEN)) return undefined;
  const nameStart = FN_OPEN.length;
  const nameEnd = identEnd(block, nameStart);
  if (nameEnd === nameStart || block.charAt(nameEnd) !== ">") return undefined;
  const tool = block.slice(nameStart, nameEnd);
  const body = block.slice(nameEnd + 1);
  const trimmed = body.trim();
  if (trimmed.startsWith("{")) return makeCall(tool, argsFromText(trimmed));
  const args: Record<string, unknown> = {};
  const text: Record<string, string> = {};
  const findClose = nextFinder(body, P_CLOSE);
  const findOpen = nextFinder(body, P_OPEN);
  let i = 0;
  while (true) {
    while (i < body.length && /\s/.test(body.charAt(i))) i++;
    if (i >= body.length) break;
    if (!body.startsWith(P_OPEN, i)) return undefined;
    const keyEnd = body.indexOf(">", i);
    if (keyEnd < 0) return undefined;
    const key = body.slice(i + P_OPEN.length, keyEnd).trim();
    const close = findClose(keyEnd);
    const next = findOpen(keyEnd);
    let valueEnd: number;
    let after: number;
    if (close >= 0 && (next < 0 || close < next)) {
      valueEnd = close;
      after = close + P_CLOSE.length;
    } else {
      valueEnd = next >= 0 ? next : body.length;
      after = valueEnd;
    }
    const raw = stripLayoutNewlines(body.slice(keyEnd + 1, valueEnd));
    setOwn(text, key, raw);
    setOwn(args, key, decodeTaggedValue(raw));
    i = after;
  }
  return makeTextCall(tool, args, text);
}

function stripLayoutNewlines(raw: string): string {
  let s = raw;
  if (s.startsWith("\n")) s = s.slice(1);
  if (s.endsWith("\n")) s = s.slice(0, -1);
  return s;
}
