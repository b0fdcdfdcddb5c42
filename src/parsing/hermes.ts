/**
 * `<tool_call>…</tool_call>` blocks (parallel = several blocks). The body decides the family:
 * JSON → Hermes/Qwen2.5/Qwen3 `{"name","arguments"}`; `<function=` → Qwen3-Coder; an identifier
 * with <arg_key>/<arg_value> pairs → GLM-4.5. A closed block claims its text even when its body
 * is garbled (so the JSON inside is not read a second time as prose JSON). An unclosed block
 * counts only when it holds complete JSON (a stop token may have eaten </tool_call>).
 */
import type { ToolCall } from "../core/llm.js";
import type { CallSpan, ScanContext } from "./call-span.js";
import { callsFromValue, salvageCall } from "./call-object.js";
import { parseGlmBody } from "./glm.js";
import { jsonThenCloser, scanContext } from "./call-span.js";
import { decodeJsonSpan, nextFinder } from "./json-scan.js";
import { parseFunctionBlock, parseQwenCoder } from "./qwen-coder.js";

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

export function parseToolCallTags(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const findOpen = nextFinder(text, OPEN);
  const findClose = nextFinder(text, CLOSE);
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const open = findOpen(pos);
    if (open < 0) break;
    const bodyStart = open + OPEN.length;
    const read = readJsonCalls(ctx, bodyStart);
    if (read) {
      spans.push({ start: open, end: read.end, calls: read.calls });
      pos = read.end;
      continue;
    }
    const nextOpen = findOpen(bodyStart);
    const close = findClose(bodyStart);
    if (close >= 0 && (nextOpen < 0 || close < nextOpen)) {
      spans.push({ start: open, end: close + CLOSE.length, calls: parseMarkupBody(text.slice(bodyStart, close)) });
      pos = close + CLOSE.length;
    } else pos = bodyStart;
  }
  return spans;
}

/** One or more call values (some models put several objects in one block), then an optional </tool_call>. */
function readJsonCalls(ctx: ScanContext, from: number): { calls: ToolCall[]; end: number } | undefined {
  const calls: ToolCall[] = [];
  let i = from;
  let end = -1;
  while (true) {
    const read = jsonThenCloser(ctx, i, CLOSE);
    const found = read && callsFromValue(decodeJsonSpan(ctx.text, read.start, read.valueEnd), false);
    if (!read || !found) break;
    calls.push(...found);
    end = read.end;
    if (read.closed) break;
    i = read.valueEnd;
  }
  return calls.length > 0 ? { calls, end } : undefined;
}

/** A closed block that is not valid call JSON: Qwen3-Coder, GLM, or garbled JSON (salvaged). */
function parseMarkupBody(raw: string): ToolCall[] {
  const body = raw.trim();
  if (body.startsWith("{") || body.startsWith("[")) {
    const salvaged = salvageCall(body);
    return salvaged ? [salvaged] : [];
  }
  if (body.startsWith("<function=")) {
    // Several <function=…>…</function> blocks in one wrapper are parallel calls (vLLM reads them so).
    const blocks = parseQwenCoder(scanContext(body));
    if (blocks.length > 0 && body.slice(blocks.at(-1)!.end).trim() === "") return blocks.flatMap((b) => b.calls);
    const fnEnd = body.lastIndexOf("</function>");
    const call = parseFunctionBlock(fnEnd >= 0 ? body.slice(0, fnEnd) : body);
    return call ? [call] : [];
  }
  const call = parseGlmBody(body);
  return call ? [call] : [];
}
