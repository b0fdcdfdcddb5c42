// What changed in the workflow context from one step to the next: the panel that answers "why
// did it do that" (a counter that moved, a message appended, a validation verdict).

export interface Change {
  /** `counters.retries`, `messages[12]`, `steps.completed[2].tool`. */
  path: string;
  kind: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
}

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);
const key = (path: string, k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`);

/**
 * The changes from `before` to `after` (JSON values), leaves first-found in key order: objects
 * key by key, arrays index by index (a message appended is `messages[n]` added). At most
 * `limit` changes; `truncated` says there were more.
 */
export function diffContext(before: unknown, after: unknown, limit = 200): { changes: Change[]; truncated: boolean } {
  const changes: Change[] = [];
  let truncated = false;
  const push = (c: Change) => {
    if (changes.length < limit) changes.push(c);
    else truncated = true;
  };
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (a === b || truncated) return;
    if (Array.isArray(a) && Array.isArray(b)) {
      const n = Math.max(a.length, b.length);
      for (let i = 0; i < n; i++) {
        const p = `${path}[${i}]`;
        if (i >= a.length) push({ path: p, kind: "added", after: b[i] });
        else if (i >= b.length) push({ path: p, kind: "removed", before: a[i] });
        else walk(a[i], b[i], p);
      }
      return;
    }
    if (isObject(a) && isObject(b)) {
      for (const k of Object.keys(a)) {
        if (!(k in b)) push({ path: key(path, k), kind: "removed", before: a[k] });
        else walk(a[k], b[k], key(path, k));
      }
      for (const k of Object.keys(b)) if (!(k in a)) push({ path: key(path, k), kind: "added", after: b[k] });
      return;
    }
    // Different types, or different primitives (a JSON round trip keeps equal ones ===).
    if (a === undefined) push({ path, kind: "added", after: b });
    else if (b === undefined) push({ path, kind: "removed", before: a });
    else push({ path, kind: "changed", before: a, after: b });
  };
  walk(before, after, "");
  return { changes, truncated };
}
