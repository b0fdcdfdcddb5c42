/**
 * Parameter values in XML-ish formats (Qwen3-Coder `<parameter=k>v</parameter>`, GLM-4.5
 * `<arg_value>v</arg_value>`, Seed-OSS, MiniMax-M2, DSML). Servers type them from the tool
 * schema, and so does the rescuer when it is given one (schema-args.ts); without one the rule is:
 * a value whose trimmed text parses as JSON is that JSON value, anything else is the raw string.
 * The encoder keeps every JSON value representable: strings that would read back as JSON, or
 * that contain "<" (a closing tag), are written JSON-encoded with "<" escaped.
 */
import { tryParseJson } from "./json-scan.js";

export function decodeTaggedValue(raw: string): unknown {
  const parsed = tryParseJson(raw);
  return parsed.ok ? parsed.value : raw;
}

export function encodeTaggedValue(value: unknown): string {
  if (typeof value === "string" && !value.includes("<") && !tryParseJson(value).ok) return value;
  return JSON.stringify(value).replaceAll("<", "\\u003c");
}
