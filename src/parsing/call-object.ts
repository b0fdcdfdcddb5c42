/**
 * Turning one decoded JSON value into a call. The rule for arguments (documented in the
 * parsing README section):
 * - args given as a JSON string are decoded;
 * - `strict` (bare/fenced JSON in prose, where JSON may just be data): the object needs a name
 *   key AND an args key, and the args must decode to a plain object — otherwise it is not a call;
 * - not strict (the value sits inside unambiguous call markup such as <tool_call>): missing args
 *   mean `{}`, and args that do not decode to an object are kept raw so the validator can answer
 *   "arguments must be an object" instead of the call silently vanishing.
 */
import type { ToolCall } from "../core/llm.js";
import { isPlainObject } from "../core/json-value.js";
import { tryParseJson } from "./json-scan.js";
import { makeCall } from "./call-span.js";

const NAME_KEYS = ["name", "tool", "tool_name", "function", "function_name"] as const;
const ARGS_KEYS = ["arguments", "args", "parameters", "input"] as const;
const ID_KEYS = ["id", "tool_call_id", "call_id"] as const;

export function callFromValue(value: unknown, strict: boolean): ToolCall | undefined {
  if (!isPlainObject(value)) return undefined;
  // OpenAI-shaped {"type":"function","function":{name, arguments}} and {"function": {...}}.
  if (isPlainObject(value.function)) {
    const inner = callFromValue(value.function, strict);
    const id = pickString(value, ID_KEYS);
    return inner && id !== undefined && inner.id === undefined ? { ...inner, id } : inner;
  }
  const tool = pickString(value, NAME_KEYS);
  if (tool === undefined) return undefined;
  // A model echoing a tool *definition* ({name, description, parameters: schema}) is not calling it.
  if (strict && "description" in value) return undefined;
  const argsKey = ARGS_KEYS.find((k) => k in value);
  const id = pickString(value, ID_KEYS);
  if (argsKey === undefined) return strict ? undefined : makeCall(tool, {}, id);
  const args = decodeArgs(value[argsKey]);
  if (strict && !isPlainObject(args)) return undefined;
  return makeCall(tool, args, id);
}

/** Calls from a value that is one call or an array of calls (all elements must be calls). */
export function callsFromValue(value: unknown, strict: boolean): ToolCall[] | undefined {
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    const calls: ToolCall[] = [];
    for (const v of value) {
      const call = callFromValue(v, strict);
      if (!call) return undefined;
      calls.push(call);
    }
    return calls;
  }
  if (isPlainObject(value) && Array.isArray(value.tool_calls)) return callsFromValue(value.tool_calls, strict);
  const call = callFromValue(value, strict);
  return call ? [call] : undefined;
}

/** A JSON-string argument is decoded when it holds an object; anything else stays as given. */
export function decodeArgs(args: unknown): unknown {
  if (typeof args !== "string") return args;
  const parsed = tryParseJson(args);
  return parsed.ok && isPlainObject(parsed.value) ? parsed.value : args;
}

/** Raw argument text inside unambiguous markup: an object when it decodes to one, else the raw text. */
export function argsFromText(raw: string): unknown {
  const parsed = tryParseJson(raw);
  if (!parsed.ok) return raw;
  return decodeArgs(parsed.value);
}

function pickString(obj: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}

const SALVAGE_NAME = /"(?:name|tool)"\s*:\s*"([A-Za-z_][A-Za-z0-9_.-]{0,63})"/;

/**
 * A closed call block whose JSON does not parse (single quotes, a missing brace): the name is
 * still unambiguous, so the call is kept with the raw body as args and the validator rejects it
 * loudly ("arguments must be an object") rather than the call vanishing.
 */
export function salvageCall(body: string): ToolCall | undefined {
  const m = SALVAGE_NAME.exec(body.slice(0, 4096));
  return m?.[1] === undefined ? undefined : makeCall(m[1], body.trim());
}
