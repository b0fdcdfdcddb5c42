/**
 * Mistral family:
 * - `[TOOL_CALLS] [{"name","arguments","id"}]` (Mistral 7B v0.3, Nemo, Small ≤3.1),
 * - `[TOOL_CALLS]name[CALL_ID]id[ARGS]{…}` / `[TOOL_CALLS]name[ARGS]{…}` (v11+ tokenizers:
 *   Small 3.2, Magistral, Devstral, Ministral 3), `[TOOL_CALLS]name{…}` (compact),
 * - the rehearsal syntax `name[ARGS]{…}` (no [TOOL_CALLS]; models echoing the format).
 * Args must be a complete JSON value: this syntax has no end token, so truncated args are
 * indistinguishable from prose and yield no call.
 */
import type { CallSpan, ScanContext } from "./call-span.js";
import { identEnd, identStart, makeCall } from "./call-span.js";
import { callsFromValue, decodeArgs } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

const MARK = "[TOOL_CALLS]";
const ARGS = "[ARGS]";
const CALL_ID = "[CALL_ID]";

export function parseMistral(ctx: ScanContext): CallSpan[] {
  const { text, json } = ctx;
  const find = nextFinder(text, MARK);
  const spans: CallSpan[] = [];
  let pos = 0;
  while (true) {
    const mark = find(pos);
    if (mark < 0) break;
    const i = skipWs(text, mark + MARK.length);
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      const end = json.valueEnd(i);
      const calls = end < 0 ? undefined : callsFromValue(decodeJsonSpan(text, i, end), false);
      if (calls && end >= 0) {
        spans.push({ start: mark, end, calls });
        pos = end;
        continue;
      }
    } else {
      const named = parseNamedCall(ctx, i);
      if (named) {
        spans.push({ start: mark, end: named.end, calls: named.calls });
        pos = named.end;
        continue;
      }
    }
    pos = mark + MARK.length;
  }
  return spans;
}

/** `name[CALL_ID]id[ARGS]{…}`, `name[ARGS]{…}` or `name{…}` at `pos`. */
function parseNamedCall(ctx: ScanContext, pos: number): CallSpan | undefined {
  const { text, json } = ctx;
  const nameEnd = identEnd(text, pos);
  if (nameEnd === pos) return undefined;
  let i = nameEnd;
  let id: string | undefined;
  if (text.startsWith(CALL_ID, i)) {
    const idStart = i + CALL_ID.length;
    let j = idStart;
    while (j < text.length && j - idStart < 64 && /[A-Za-z0-9_-]/.test(text.charAt(j))) j++;
    id = text.slice(idStart, j);
    i = j;
  }
  if (text.startsWith(ARGS, i)) i += ARGS.length;
  else if (id !== undefined) return undefined;
  i = skipWs(text, i);
  const end = json.valueEnd(i);
  if (end < 0 || text.charCodeAt(i) !== 0x7b) return undefined;
  const args = decodeArgs(decodeJsonSpan(text, i, end));
  return { start: pos, end, calls: [makeCall(text.slice(pos, nameEnd), args, id || undefined)] };
}

/** The rehearsal syntax `name[ARGS]{…}` (also `name[CALL_ID]id[ARGS]{…}`) without [TOOL_CALLS]. */
export function parseRehearsal(ctx: ScanContext): CallSpan[] {
  const { text } = ctx;
  const spans: CallSpan[] = [];
  for (const token of [ARGS, CALL_ID]) {
    const find = nextFinder(text, token);
    let pos = 0;
    while (true) {
      const at = find(pos);
      if (at < 0) break;
      pos = at + token.length;
      const start = identStart(text, at);
      if (start === at || (token === ARGS && text.charAt(start - 1) === "]")) continue;
      const named = parseNamedCall(ctx, start);
      if (named) {
        spans.push(named);
        pos = Math.max(pos, named.end);
      }
    }
  }
  return spans;
}
