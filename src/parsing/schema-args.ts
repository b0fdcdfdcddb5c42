/**
 * Typing text-only argument values from the tool's JSON Schema, as vLLM and llama.cpp do for
 * the XML-ish formats: a property declared `string` keeps the model's exact text (quotes,
 * digits and all), `integer`/`number`/`boolean`/`null`/`array`/`object` are parsed. A value
 * that fits none of its declared types, a property the schema does not type, and every value
 * of a tool without a schema keep the schema-free reading (tagged-value.ts: JSON when it
 * parses, else the text), and the validator reports what is still wrong.
 */
import type { ToolCall } from "../core/llm.js";
import { isPlainObject } from "../core/json-value.js";
import { setOwn } from "../core/set-own.js";
import { textArgsOf } from "./call-span.js";
import { tryParseJson } from "./json-scan.js";
import { decodeTaggedValue, encodeTaggedValue } from "./tagged-value.js";

/** Tool name → the JSON Schema of its parameters. */
export type ToolSchemas = Readonly<Record<string, unknown>>;

/**
 * The call with its text-only values typed from `schemas[call.tool]`; other calls unchanged.
 *
 * @example
 * // <parameter=zip>02134</parameter> for { zip: { type: "string" } } stays "02134", not 2134
 */
export function typeTextArgs(call: ToolCall, schemas: ToolSchemas | undefined): ToolCall {
  const text = textArgsOf(call);
  // Own keys only: a call to "__proto__" or "constructor" must not find Object.prototype's.
  const schema = schemas !== undefined && Object.hasOwn(schemas, call.tool) ? schemas[call.tool] : undefined;
  if (!text || !isPlainObject(schema) || !isPlainObject(call.args)) return call;
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const args: Record<string, unknown> = { ...call.args };
  for (const [key, raw] of Object.entries(text)) setOwn(args, key, coerceText(raw, Object.hasOwn(properties, key) ? properties[key] : undefined));
  return { ...call, args };
}

/** The JSON types a property schema allows (type, or the types of its anyOf/oneOf branches). */
function typesOf(schema: unknown): Set<string> {
  const out = new Set<string>();
  if (!isPlainObject(schema)) return out;
  const { type } = schema;
  if (typeof type === "string") out.add(type);
  else if (Array.isArray(type)) for (const t of type) if (typeof t === "string") out.add(t);
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) for (const t of typesOf(b)) out.add(t);
  }
  if (out.size === 0 && Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) out.add("string");
  return out;
}

const DECIMAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * One text value typed by its property schema: the first declared type it fits, in the order
 * number, boolean, null, array/object, string; otherwise the schema-free reading.
 *
 * @example
 * coerceText("3", { type: "integer" });   // 3
 * coerceText("3", { type: "string" });    // "3"
 * coerceText("True", { type: "boolean" }); // true
 * coerceText("soon", { type: "integer" }); // "soon"
 */
export function coerceText(raw: string, schema: unknown): unknown {
  const types = typesOf(schema);
  if (types.size === 0) return decodeTaggedValue(raw);
  const t = raw.trim();
  if ((types.has("integer") || types.has("number")) && DECIMAL.test(t)) {
    const n = Number(t);
    if (Number.isFinite(n) && (types.has("number") || Number.isInteger(n))) return n;
  }
  if (types.has("boolean") && /^(?:true|false)$/i.test(t)) return t.toLowerCase() === "true";
  if (types.has("null") && /^(?:null|none)$/i.test(t)) return null;
  if (types.has("array") || types.has("object")) {
    const parsed = tryParseJson(t);
    if (parsed.ok && ((Array.isArray(parsed.value) && types.has("array")) || (isPlainObject(parsed.value) && types.has("object")))) return parsed.value;
  }
  if (types.has("string")) return ownEncoding(raw) ?? raw;
  return decodeTaggedValue(raw);
}

/**
 * The string our own renderer JSON-encoded (tagged-value.ts quotes strings that hold "<" or read
 * as JSON): a model copying that form from its history means the string, not the quotes.
 * Anything else in quotes is the model's text, quotes and all.
 */
function ownEncoding(raw: string): string | undefined {
  const parsed = tryParseJson(raw);
  return parsed.ok && typeof parsed.value === "string" && encodeTaggedValue(parsed.value) === raw ? parsed.value : undefined;
}
