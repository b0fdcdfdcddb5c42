/**
 * `<invoke name="…">` calls, three spellings of one shape:
 * - MiniMax-M2: `<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>`
 * - the Claude-style prompt format: the same inside `<function_calls>…</function_calls>`
 * - DeepSeek V3.2 "DSML": `<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`,
 *   where `string="true"` marks a verbatim string and `string="false"` a JSON value; an invoke
 *   body may also be one JSON object.
 * Parameter values are text (typed from the tool's schema by schema-args.ts when known). Each
 * closed invoke is one span; the wrappers are framing that extractToolCalls removes.
 */
import { setOwn } from "../core/set-own.js";
import type { CallSpan, ScanContext } from "./call-span.js";
import { makeCall, makeTextCall } from "./call-span.js";
import { argsFromText } from "./call-object.js";
import { nextFinder } from "./json-scan.js";
import { decodeTaggedValue } from "./tagged-value.js";

const DIALECTS = ["", "｜DSML｜"].map((p) => ({
  open: `<${p}invoke name="`,
  close: `</${p}invoke>`,
  param: `<${p}parameter name="`,
  paramClose: `</${p}parameter>`,
}));

export function parseInvokeXml(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  for (const d of DIALECTS) {
    const findOpen = nextFinder(text, d.open);
    const findClose = nextFinder(text, d.close);
    let pos = 0;
    while (true) {
      const open = findOpen(pos);
      if (open < 0) break;
      const close = findClose(open);
      if (close < 0) break;
      const nextOpen = findOpen(open + 1);
      if (nextOpen >= 0 && nextOpen < close) {
        pos = nextOpen; // an invoke that never closed
        continue;
      }
      const call = readInvoke(text.slice(open + d.open.length, close), d);
      spans.push({ start: open, end: close + d.close.length, calls: call ? [call] : [] });
      pos = close + d.close.length;
    }
  }
  return spans;
}

type Dialect = (typeof DIALECTS)[number];

/** `NAME">` + parameters (or one JSON object), up to the closing tag; undefined when malformed. */
function readInvoke(inner: string, d: Dialect) {
  const nameEnd = inner.indexOf('">');
  if (nameEnd <= 0) return undefined;
  const tool = inner.slice(0, nameEnd);
  if (!/^[A-Za-z_][\w.-]*$/.test(tool)) return undefined;
  const body = inner.slice(nameEnd + 2);
  if (body.trim().startsWith("{")) return makeCall(tool, argsFromText(body.trim()));
  const args: Record<string, unknown> = {};
  const text: Record<string, string> = {};
  let i = 0;
  while (true) {
    const at = body.indexOf(d.param, i);
    if (at < 0) break;
    if (body.slice(i, at).trim() !== "") return undefined; // stray text between parameters
    const keyStart = at + d.param.length;
    const keyEnd = body.indexOf('"', keyStart);
    const tagEnd = keyEnd < 0 ? -1 : body.indexOf(">", keyEnd);
    const valueEnd = tagEnd < 0 ? -1 : body.indexOf(d.paramClose, tagEnd);
    if (valueEnd < 0) return undefined;
    const key = body.slice(keyStart, keyEnd);
    const attrs = body.slice(keyEnd + 1, tagEnd);
    const inner = body.slice(tagEnd + 1, valueEnd);
    if (/\bstring\s*=\s*"true"/.test(attrs)) {
      setOwn(args, key, inner); // DSML says it is a string: exactly as written (newlines too), never typed
    } else {
      const raw = trimLayout(inner);
      // MiniMax-M2 text, or DSML `string="false"` (JSON): typed from the schema when there is one.
      setOwn(text, key, raw);
      setOwn(args, key, decodeTaggedValue(raw));
    }
    i = valueEnd + d.paramClose.length;
  }
  if (body.slice(i).trim() !== "") return undefined;
  return makeTextCall(tool, args, text);
}

/** One newline after the opening and before the closing tag is layout, not value. */
function trimLayout(raw: string): string {
  let s = raw;
  if (s.startsWith("\n")) s = s.slice(1);
  if (s.endsWith("\n")) s = s.slice(0, -1);
  return s;
}
