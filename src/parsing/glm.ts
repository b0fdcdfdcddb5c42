/**
 * GLM-4.5/4.6 calls: `<tool_call>name\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>`
 * (the body inside <tool_call> is handed over by hermes.ts). Values follow tagged-value.ts.
 */
import type { ToolCall } from "../core/llm.js";
import { setOwn } from "../core/set-own.js";
import { identEnd, makeTextCall } from "./call-span.js";
import { nextFinder } from "./json-scan.js";
import { decodeTaggedValue } from "./tagged-value.js";

const KEY_OPEN = "<arg_key>";
const KEY_CLOSE = "</arg_key>";
const VALUE_OPEN = "<arg_value>";
const VALUE_CLOSE = "</arg_value>";

/** Parse a GLM body ("name" + arg pairs); undefined when it is not exactly that shape. */
export function parseGlmBody(body: string): ToolCall | undefined {
  const nameStart = body.length - body.trimStart().length;
  const nameEnd = identEnd(body, nameStart);
  if (nameEnd === nameStart) return undefined;
  const tool = body.slice(nameStart, nameEnd);
  const args: Record<string, unknown> = {};
  const text: Record<string, string> = {};
  const keyClose = nextFinder(body, KEY_CLOSE);
  const valueClose = nextFinder(body, VALUE_CLOSE);
  let i = nameEnd;
  while (true) {
    i = skipSpace(body, i);
    if (i >= body.length) break;
    if (!body.startsWith(KEY_OPEN, i)) return undefined;
    const kEnd = keyClose(i);
    if (kEnd < 0) return undefined;
    const key = body.slice(i + KEY_OPEN.length, kEnd).trim();
    i = skipSpace(body, kEnd + KEY_CLOSE.length);
    if (!body.startsWith(VALUE_OPEN, i)) return undefined;
    const vEnd = valueClose(i);
    if (vEnd < 0) return undefined;
    const raw = body.slice(i + VALUE_OPEN.length, vEnd);
    setOwn(text, key, raw);
    setOwn(args, key, decodeTaggedValue(raw));
    i = vEnd + VALUE_CLOSE.length;
  }
  return makeTextCall(tool, args, text);
}

function skipSpace(s: string, pos: number): number {
  let i = pos;
  while (i < s.length && /\s/.test(s.charAt(i))) i++;
  return i;
}
