/**
 * Whether a value is plain JSON, checked where data enters the machine context and snapshots
 * (tool arguments and results, stored runs): a BigInt, a class instance or hostile nesting
 * fails here with its path instead of far away in JSON.stringify or structuredClone.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Deepest nesting accepted in data the loop stores as JSON (context, snapshots). Deeper values
 * overflow the stack of recursive JSON code (JSON.stringify, structuredClone, ajv) with a
 * RangeError far from where they came in.
 *
 * @example
 * jsonIssue(value, MAX_JSON_DEPTH) === undefined; // safe to keep in the machine context
 */
export const MAX_JSON_DEPTH = 512;
const MAX_JSON_VALUES = 1_000_000;

function className(proto: unknown): string {
  try {
    const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === "string" && name ? name : "non-plain object";
  } catch {
    return "non-plain object";
  }
}

type Visit = { value: unknown; depth: number; parent?: Visit; key?: string | number };

/** The path to `visit`; past `shownKeys` segments it ends in "…" (enough to name a field). */
function visitPath(visit: Visit, shownKeys = Infinity): string {
  const keys: (string | number)[] = [];
  for (let v: Visit | undefined = visit; v?.parent; v = v.parent) keys.push(v.key!);
  keys.reverse();
  const path = keys.slice(0, shownKeys).map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("");
  const more = keys.length > shownKeys ? "…" : "";
  return path ? path.replace(/^\./, "") + more : "(root)";
}

/**
 * The path of the first object or array (in document order) nested deeper than `maxDepth`
 * levels (`[]` is one level, as for jsonIssue), or undefined when there is none. Iterative, so
 * hostile nesting cannot overflow the stack here. Only depth is judged: for JSON.parse output,
 * where nothing else can be wrong.
 *
 * @example
 * tooDeepPath({ a: [[1]] }, 2); // "a[0]"
 * tooDeepPath({ a: [1] }, 2); // undefined
 */
export function tooDeepPath(value: unknown, maxDepth: number, shownKeys = Infinity): string | undefined {
  const stack: Visit[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (typeof v !== "object" || v === null) continue;
    if (visit.depth >= maxDepth) return visitPath(visit, shownKeys);
    // Children pushed last-first, so the first offender in document order is the one named.
    // Only objects are visited: a visit for every string and number was most of the walk's cost.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const child: unknown = v[i];
        if (typeof child === "object" && child !== null) stack.push({ value: child, depth: visit.depth + 1, parent: visit, key: i });
      }
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = (v as Record<string, unknown>)[keys[i]!];
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: visit.depth + 1, parent: visit, key: keys[i]! });
    }
  }
  return undefined;
}

/**
 * Why `value` is not plain JSON (a BigInt, function or symbol, a non-finite number, an object
 * that is not a plain object or array, a cycle, nesting deeper than `maxDepth`), or undefined
 * when it is. Iterative, so hostile depth cannot overflow the stack here. `undefined` is
 * accepted (JSON.stringify drops it).
 *
 * @example
 * jsonIssue({ a: 1n }); // "a bigint at a"
 * jsonIssue({ a: [1, "x", null] }); // undefined
 */
export function jsonIssue(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  // The loop checks every model answer: small clean values are confirmed by a quick recursive
  // look; anything else (a problem to word, a big or deep value) gets the careful walk below.
  fastBudget = FAST_VALUES;
  try {
    if (isClearlyJson(value, 0, Math.min(maxDepth, FAST_DEPTH))) return undefined;
  } catch {
    // a throwing getter or proxy: the walk below reports it as it always did
  }
  return walkJsonIssue(value, maxDepth);
}

/** jsonIssue's careful walk (no quick look first): exported for the test that holds the two equal. */
export function walkJsonIssue(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  const stack: Visit[] = [{ value, depth: 0 }];
  let count = 0;
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (++count > MAX_JSON_VALUES) return `more than ${MAX_JSON_VALUES} values`;
    if (v === null || v === undefined || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return `${v} at ${visitPath(visit)} (not a JSON number)`;
      continue;
    }
    if (typeof v !== "object") return `a ${typeof v} at ${visitPath(visit)}`;
    // A cycle also ends here: its depth grows without bound.
    if (visit.depth >= maxDepth) return `nesting deeper than ${maxDepth} levels (or a cycle) at ${visitPath(visit)}`;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth: visit.depth + 1, parent: visit, key: i });
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      return `a ${className(proto)} at ${visitPath(visit)}`;
    }
    let entries: [string, unknown][];
    try {
      entries = Object.entries(v);
    } catch (error) {
      return `an unreadable property at ${visitPath(visit)} (${error instanceof Error ? error.message : "getter threw"})`;
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      stack.push({ value: child, depth: visit.depth + 1, parent: visit, key });
    }
  }
  return undefined;
}

const FAST_DEPTH = 64;
const FAST_VALUES = 10_000;
let fastBudget = 0;

/** True only for what jsonIssue's walk passes (within FAST_DEPTH and FAST_VALUES); false: look closer. */
function isClearlyJson(v: unknown, depth: number, maxDepth: number): boolean {
  if (--fastBudget < 0) return false;
  if (v === null || v === undefined || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || depth >= maxDepth) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isClearlyJson(v[i], depth + 1, maxDepth)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(v)) if (!isClearlyJson((v as Record<string, unknown>)[key], depth + 1, maxDepth)) return false;
  return true;
}
