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
// A key that is no identifier goes in quotes, unescaped: `counts["refund:{"order":"A1"}"]` (the path is read, not parsed).
const key = (path: string, k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? (path ? `${path}.${k}` : k) : `${path}["${k}"]`);

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

// Times in the context are epoch milliseconds under `now`, `at` and `…At` keys; the range
// keeps a count that happens to sit under such a key (`compactAt` is tokens) a number.
const isTimeKey = (key: string) => key === "now" || key === "at" || /[a-z]At$/.test(key);
const isEpochMs = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x) && x >= 1e12 && x < 1e14;
const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Epoch ms as a local clock time with milliseconds ("14:03:07.250"): a step is milliseconds long. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A string holding a JSON object or array (a tool result's content), parsed; else undefined. */
function heldJson(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function readable(value: unknown, key: string): unknown {
  if (isTimeKey(key) && isEpochMs(value)) return clockTime(value);
  if (typeof value === "string") {
    const held = heldJson(value);
    return held === undefined ? value : readable(held, "");
  }
  if (Array.isArray(value)) return value.map((v) => readable(v, ""));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, readable(v, k)]));
  return value;
}

/**
 * A context value as the diff prints it (`key`: the last name of its path): times as clock
 * times, and JSON held in strings as JSON (`"content":{"total":85}`, not `"{\"total\":85}"`);
 * a string as it is, anything else as compact JSON.
 */
export function displayValue(value: unknown, key = ""): string {
  const shown = readable(value, key);
  return typeof shown === "string" ? shown : (JSON.stringify(shown) ?? String(shown));
}

/** The last name in a diff path: `now` of `now`, `startedAt` of `run.startedAt`, "" for `messages[3]`. */
export function lastKey(path: string): string {
  return /(?:^|\.)([A-Za-z_$][\w$]*)$/.exec(path)?.[1] ?? "";
}
