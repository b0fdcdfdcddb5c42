/**
 * JSON calls without model-specific markup: fenced (```json …```), embedded in prose, Llama 3.x
 * bare `{"name","parameters"}` (the same shape), and Llama 3.x `<|python_tag|>{…}` (`;` separated).
 * Bare and fenced JSON is read strictly (see call-object.ts): JSON that is data is not a call.
 */
import type { ToolCall } from "../core/llm.js";
import type { CallSpan, ScanContext } from "./call-span.js";
import { callsFromValue } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

/** Calls in every ``` fence whose body holds call-shaped JSON; the span covers the whole fence. */
export function parseFencedJson(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const find = nextFinder(text, "```");
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const open = find(pos);
    if (open < 0) break;
    const close = find(open + 3);
    if (close < 0) break;
    const calls = embeddedIn(ctx, open + 3, close).flatMap((s) => s.calls);
    if (calls.length > 0) spans.push({ start: open, end: close + 3, calls });
    pos = close + 3;
  }
  return spans;
}

/** Call-shaped JSON objects/arrays anywhere in the text. */
export function parseEmbeddedJson(ctx: ScanContext): CallSpan[] {
  return embeddedIn(ctx, 0, ctx.text.length);
}

function embeddedIn(ctx: ScanContext, from: number, to: number): CallSpan[] {
  const { text, json } = ctx;
  const spans: CallSpan[] = [];
  let i = from;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (c !== 0x7b && c !== 0x5b) {
      i++;
      continue;
    }
    const end = json.valueEnd(i);
    if (end < 0 || end > to) {
      i++;
      continue;
    }
    // Data JSON is skipped whole: a call nested inside data is data too.
    const calls = callsFromValue(decodeJsonSpan(text, i, end), true);
    if (calls) spans.push({ start: i, end, calls });
    i = end;
  }
  return spans;
}

const PYTHON_TAG = "<|python_tag|>";

/** Llama 3.x `<|python_tag|>{"name": …, "parameters": …}` (several joined by `;`). */
export function parsePythonTag(ctx: ScanContext): CallSpan[] {
  const { text, json } = ctx;
  const find = nextFinder(text, PYTHON_TAG);
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const tag = find(pos);
    if (tag < 0) break;
    let i = skipWs(text, tag + PYTHON_TAG.length);
    const calls: ToolCall[] = [];
    let end = i;
    while (true) {
      const valueEnd = json.valueEnd(i);
      if (valueEnd < 0) break;
      const found = callsFromValue(decodeJsonSpan(text, i, valueEnd), false);
      if (!found) break;
      calls.push(...found);
      end = valueEnd;
      const next = skipWs(text, valueEnd);
      if (text.charCodeAt(next) !== 0x3b) break;
      i = skipWs(text, next + 1);
    }
    if (calls.length > 0) spans.push({ start: tag, end, calls });
    pos = Math.max(end, tag + PYTHON_TAG.length);
  }
  return spans;
}
