/**
 * The change from one JSON value to the next, for the O(1) write path: a committed step stores
 * what changed since the previous commit (the new messages, counters, the step record), not the
 * whole snapshot again.
 *
 * The diff relies on the snapshot being immutable, as XState's context is: a subtree that was not
 * assigned keeps its identity, so `prev === next` proves it unchanged without looking inside, and
 * an array whose old elements are all still there (by identity) and in place grew by appending.
 * Values that are equal but not identical are simply written again: correct, only larger.
 * `undefined` object fields count as absent, as in JSON.
 */

export type JsonDelta =
  /** Replace with this value. */
  | { v: unknown }
  /** An array: these items appended, the prefix unchanged. */
  | { a: unknown[] }
  /** An object: these fields changed (`o`), these removed (`d`). */
  | { o?: Record<string, JsonDelta>; d?: string[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** An own field only: "toString" or "__proto__" in a tool's arguments are data, not the prototype's. */
const own = (o: Record<string, unknown>, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);
const put = (o: Record<string, unknown>, key: string, value: unknown) => Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });

/**
 * What turns `prev` into `next`; undefined when nothing changed.
 *
 * @example
 * const delta = diffJson(previousSnapshot, snapshot); // { o: { iteration: { v: 4 }, messages: { a: [...] } } }
 * applyJson(previousSnapshot, delta); // deep-equals snapshot
 */
export function diffJson(prev: unknown, next: unknown): JsonDelta | undefined {
  if (prev === next) return undefined;
  if (Array.isArray(prev) && Array.isArray(next)) {
    if (next.length >= prev.length && prev.every((item, i) => item === next[i])) {
      return next.length === prev.length ? undefined : { a: next.slice(prev.length) };
    }
    return { v: next };
  }
  if (isObject(prev) && isObject(next)) {
    let changed: Record<string, JsonDelta> | undefined;
    let removed: string[] | undefined;
    for (const key of Object.keys(next)) {
      const value = next[key];
      if (value === undefined) continue;
      const before = own(prev, key);
      const delta = before === undefined ? { v: value } : diffJson(before, value);
      if (delta !== undefined) put((changed ??= {}), key, delta);
    }
    for (const key of Object.keys(prev)) {
      if (prev[key] !== undefined && own(next, key) === undefined) (removed ??= []).push(key);
    }
    if (changed === undefined && removed === undefined) return undefined;
    return { ...(changed ? { o: changed } : {}), ...(removed ? { d: removed } : {}) };
  }
  return { v: next };
}

/**
 * `base` with `delta` applied. `base` is left as it was unless `inPlace` (for a tree freshly
 * parsed from storage: rebuilding from a base and many appends then costs no copies).
 */
export function applyJson(base: unknown, delta: JsonDelta, options: { inPlace?: boolean } = {}): unknown {
  if ("v" in delta) return delta.v;
  if ("a" in delta) {
    if (!Array.isArray(base)) throw new TypeError("an append delta applies to an array");
    if (!options.inPlace) return [...base, ...delta.a];
    for (const item of delta.a) base.push(item);
    return base;
  }
  if (!isObject(base)) throw new TypeError("an object delta applies to an object");
  const out: Record<string, unknown> = options.inPlace ? base : { ...base };
  for (const key of delta.d ?? []) delete out[key];
  for (const [key, inner] of Object.entries(delta.o ?? {})) {
    // A field added by `v` may be absent from the base; any other delta needs the old value.
    put(out, key, "v" in inner ? inner.v : applyJson(own(out, key), inner, options));
  }
  return out;
}
