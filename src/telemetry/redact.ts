/**
 * Masking of tool arguments wherever forge-ts reports a call (spans, logs, the visualizer feed,
 * stored logs when asked). The tool itself always gets the real values.
 */

/** What a masked value reads as. */
export const REDACTED = "[redacted]";

/**
 * A copy of `value` in which every property named in `keys`, at any depth (inside arrays too),
 * reads "[redacted]". Returns `value` itself when there is nothing to mask.
 *
 * @example
 * redactArgs({ user: "ann", password: "x" }, ["password"]); // { user: "ann", password: "[redacted]" }
 */
export function redactArgs<T>(value: T, keys: readonly string[] | undefined): T {
  if (!keys || keys.length === 0) return value;
  const masked = new Set(keys);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const out: Record<string, unknown> = {};
    for (const [k, inner] of Object.entries(v)) out[k] = masked.has(k) ? REDACTED : walk(inner);
    return out;
  };
  return walk(value) as T;
}
