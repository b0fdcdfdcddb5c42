/**
 * Canonical JSON: object keys sorted at every depth, so two values that differ only in key order
 * render identically. Used for loop-break call keys and for deep equality of tool arguments.
 */
import { InvalidArgumentError } from "../core/errors.js";

/**
 * Render `value` as canonical JSON. Follows JSON.stringify for what JSON cannot hold
 * (undefined object entries are dropped, undefined array items and non-finite numbers become
 * `null`), except that a top-level `undefined` renders as `undefined` so it never equals `null`.
 *
 * @example
 * canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "undefined";
  return render(value, new Set());
}

/**
 * Deep equality of JSON-like values (key order ignored).
 *
 * @example
 * jsonEqual({ a: 1, b: [1] }, { b: [1], a: 1 }); // true
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function render(value: unknown, seen: Set<object>): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    case "function":
    case "symbol":
      return "null";
    default:
      break;
  }
  const obj = value as object;
  if (seen.has(obj)) throw new InvalidArgumentError("args", "value contains a circular reference");
  seen.add(obj);
  try {
    if (Array.isArray(obj)) return `[${obj.map((item) => render(item, seen)).join(",")}]`;
    const record = obj as Record<string, unknown>;
    const entries = Object.keys(record)
      .filter((k) => record[k] !== undefined && typeof record[k] !== "function" && typeof record[k] !== "symbol")
      .sort()
      .map((k) => `${JSON.stringify(k)}:${render(record[k], seen)}`);
    return `{${entries.join(",")}}`;
  } finally {
    seen.delete(obj);
  }
}
