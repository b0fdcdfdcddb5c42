/**
 * What every family parser returns: the calls found in one region of the text. Regions let
 * the rescuer keep calls in source order, drop a second reading of the same region (a fence
 * and the JSON inside it) and cut the markup out of the visible content.
 */
import type { ToolCall } from "../core/llm.js";
import { JsonScanner, skipWs } from "./json-scan.js";

export interface CallSpan {
  start: number;
  end: number;
  /** May be empty: a region that is clearly markup (e.g. a call to an unknown tool) still claims its text. */
  calls: ToolCall[];
  /** The format family that read the region (set by findCallSpans; telemetry labels rescues with it). */
  format?: string;
}

export interface ScanContext {
  readonly text: string;
  readonly json: JsonScanner;
  /** The tools on offer, for the few readings that are only calls when they name one. */
  readonly tools?: ReadonlySet<string> | undefined;
}

export type FamilyParser = (ctx: ScanContext) => CallSpan[];

export function scanContext(text: string, tools?: ReadonlySet<string>): ScanContext {
  return { text, json: new JsonScanner(text), tools };
}

export function makeCall(tool: string, args: unknown, id?: string): ToolCall {
  return id === undefined ? { tool, args } : { tool, args, id };
}

export function isIdentStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

export function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d;
}

/** End of the tool-name identifier ([A-Za-z_][A-Za-z0-9_.-]*) starting at pos (pos itself when none). */
export function identEnd(text: string, pos: number): number {
  if (!isIdentStart(text.charCodeAt(pos))) return pos;
  let i = pos + 1;
  while (i < text.length && isIdentPart(text.charCodeAt(i))) i++;
  return i;
}

/** Start of the identifier that ends at `end` (end itself when none). */
export function identStart(text: string, end: number): number {
  let i = end;
  while (i > 0 && isIdentPart(text.charCodeAt(i - 1))) i--;
  while (i < end && !isIdentStart(text.charCodeAt(i))) i++;
  return i;
}

/**
 * A JSON value at `pos` (after whitespace), optionally followed by `closer`. The scanner decides
 * where the value ends, so a closing token quoted inside a string argument cannot cut it short.
 */
export function jsonThenCloser(
  ctx: ScanContext,
  pos: number,
  closer: string,
): { start: number; valueEnd: number; end: number; closed: boolean } | undefined {
  const { text, json } = ctx;
  const start = skipWs(text, pos);
  const valueEnd = json.valueEnd(start);
  if (valueEnd < 0) return undefined;
  const after = skipWs(text, valueEnd);
  const closed = text.startsWith(closer, after);
  return { start, valueEnd, end: closed ? after + closer.length : valueEnd, closed };
}

/**
 * Argument values some formats carry only as text (Qwen3-Coder `<parameter=k>`, GLM
 * `<arg_value>`, MiniMax-M2 `<parameter name>`, DSML `string="true"`). The call's `args` hold
 * the schema-free reading (tagged-value.ts); the text is kept on the side so the rescuer can
 * type each value from the tool's JSON Schema when it has one (schema-args.ts).
 */
const TEXT_ARGS = new WeakMap<ToolCall, Record<string, string>>();

/** A call whose listed values arrived as text; `args` may hold other, already typed values too. */
export function makeTextCall(tool: string, args: Record<string, unknown>, textArgs: Record<string, string>): ToolCall {
  const call = makeCall(tool, args);
  if (Object.keys(textArgs).length > 0) TEXT_ARGS.set(call, textArgs);
  return call;
}

export function textArgsOf(call: ToolCall): Record<string, string> | undefined {
  return TEXT_ARGS.get(call);
}
