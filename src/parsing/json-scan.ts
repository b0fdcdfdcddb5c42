/**
 * The shared primitive of every rescue parser: a linear, backtracking-free JSON scanner.
 *
 * `JsonScanner.valueEnd(pos)` validates the JSON container starting at `pos` and returns where
 * it ends. Results are memoised per container start, and a failure is recorded for every
 * container still open when it happens (JSON is context-free, so a container that is open at
 * the failure point fails on its own too). Each position is therefore parsed as a container
 * start at most once, which keeps scanning all of a 1 MB "{{{{…" or '{"a":{"a":…' linear.
 *
 * Leniency: raw control characters inside strings are accepted (models emit literal newlines
 * in code arguments); everything else is strict JSON.
 */

const enum St {
  ObjKeyOrClose,
  ObjKey,
  ObjColon,
  ObjValue,
  ObjCommaOrClose,
  ArrValueOrClose,
  ArrValue,
  ArrCommaOrClose,
}

const FAIL = -1;

export class JsonScanner {
  private memo: Int32Array | undefined;
  // Typed stacks, allocated once per text and reused: a 1 MB "[{[{…" starts ~500k short scans
  // and "[[[[…" nests a million deep.
  private starts: Int32Array | undefined;
  private states: Uint8Array | undefined;

  constructor(readonly text: string) {}

  /** End (exclusive) of the JSON object/array starting at `pos`, or -1 if it is not one. */
  valueEnd(pos: number): number {
    const text = this.text;
    const c = text.charCodeAt(pos);
    if (c !== 0x7b && c !== 0x5b) return FAIL;
    // Cheap reject before touching the memo: what follows the opener must be able to continue it.
    const next = text.charCodeAt(skipWs(text, pos + 1));
    if (c === 0x7b ? next !== 0x22 && next !== 0x7d : !canStartValue(next) && next !== 0x5d) return FAIL;
    const memo = (this.memo ??= new Int32Array(text.length));
    const known = memo[pos] ?? 0;
    if (known !== 0) return known > 0 ? known - 1 : FAIL;
    return this.scan(pos, memo);
  }

  // One explicit stack, no recursion (a 1 MB "[[[[" must not overflow) and no per-step closures.
  private scan(start: number, memo: Int32Array): number {
    const text = this.text;
    const n = text.length;
    const starts = (this.starts ??= new Int32Array(n + 1));
    const states = (this.states ??= new Uint8Array(n + 1));
    let depth = 1;
    starts[0] = start;
    states[0] = text.charCodeAt(start) === 0x7b ? St.ObjKeyOrClose : St.ArrValueOrClose;
    let i = start + 1;
    let failed = false;
    while (depth > 0) {
      while (i < n && isWs(text.charCodeAt(i))) i++;
      if (i >= n) {
        failed = true;
        break;
      }
      const c = text.charCodeAt(i);
      const top = depth - 1;
      const st = states[top] as St;
      let closing = false;
      if (st === St.ObjKeyOrClose || st === St.ObjKey) {
        if (c === 0x7d && st === St.ObjKeyOrClose) closing = true;
        else if (c === 0x22 && (i = scanString(text, i)) >= 0) states[top] = St.ObjColon;
        else failed = true;
      } else if (st === St.ObjColon) {
        if (c === 0x3a) {
          i++;
          states[top] = St.ObjValue;
        } else failed = true;
      } else if (st === St.ObjCommaOrClose || st === St.ArrCommaOrClose) {
        if (c === 0x2c) {
          i++;
          states[top] = st === St.ObjCommaOrClose ? St.ObjKey : St.ArrValue;
        } else if (c === (st === St.ObjCommaOrClose ? 0x7d : 0x5d)) closing = true;
        else failed = true;
      } else if (c === 0x5d && st === St.ArrValueOrClose) {
        closing = true;
      } else if (c === 0x7b || c === 0x5b) {
        const known = memo[i] ?? 0;
        if (known < 0) failed = true;
        else if (known > 0) {
          i = known - 1;
          states[top] = afterValue(st);
        } else {
          starts[depth] = i;
          states[depth] = c === 0x7b ? St.ObjKeyOrClose : St.ArrValueOrClose;
          depth++;
          i++;
        }
      } else if ((i = scanScalar(text, i)) >= 0) {
        states[top] = afterValue(st);
      } else failed = true;
      if (failed) break;
      if (closing) {
        i++;
        depth--;
        memo[starts[depth]!] = i + 1;
        if (depth > 0) states[depth - 1] = afterValue(states[depth - 1] as St);
      }
    }
    if (failed) {
      for (let k = 0; k < depth; k++) memo[starts[k]!] = FAIL;
      return FAIL;
    }
    return i;
  }
}

function canStartValue(c: number): boolean {
  return c === 0x22 || c === 0x7b || c === 0x5b || c === 0x2d || isDigit(c) || c === 0x74 || c === 0x66 || c === 0x6e;
}

function afterValue(st: St): St {
  return st === St.ObjValue ? St.ObjCommaOrClose : St.ArrCommaOrClose;
}

export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Index after the closing quote of the string starting at `pos` (a `"`), or -1. */
export function scanString(text: string, pos: number): number {
  const n = text.length;
  let i = pos + 1;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c === 0x5c) {
      const e = text.charCodeAt(i + 1);
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) return FAIL;
        i += 6;
      } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        i += 2;
      } else return FAIL;
    } else i++;
  }
  return FAIL;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function scanScalar(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return scanString(text, i);
  for (const lit of ["true", "false", "null"]) if (text.startsWith(lit, i)) return i + lit.length;
  return scanNumber(text, i);
}

function scanNumber(text: string, pos: number): number {
  let i = pos;
  if (text.charCodeAt(i) === 0x2d) i++;
  if (text.charCodeAt(i) === 0x30) i++;
  else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
  else return FAIL;
  if (text.charCodeAt(i) === 0x2e) {
    i++;
    if (!isDigit(text.charCodeAt(i))) return FAIL;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 0x2b || s === 0x2d) i++;
    if (!isDigit(text.charCodeAt(i))) return FAIL;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  return i;
}

/**
 * Decode a span the scanner accepted. Raw control characters inside strings (accepted by the
 * scanner) are escaped first so JSON.parse takes them.
 */
export function decodeJsonSpan(text: string, start: number, end: number): unknown {
  const slice = text.slice(start, end);
  try {
    return JSON.parse(slice);
  } catch {
    // eslint-disable-next-line no-control-regex
    return JSON.parse(slice.replace(/[\u0000-\u001f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`));
  }
}

/** Parse a JSON value from a whole string (after trimming) or return undefined. */
export function tryParseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  const s = raw.trim();
  if (s === "") return { ok: false };
  const scanner = new JsonScanner(s);
  const c = s.charCodeAt(0);
  const end = c === 0x7b || c === 0x5b ? scanner.valueEnd(0) : scanScalar(s, 0);
  if (end !== s.length) return { ok: false };
  return { ok: true, value: decodeJsonSpan(s, 0, end) };
}

export function skipWs(text: string, pos: number): number {
  let i = pos;
  while (i < text.length && isWs(text.charCodeAt(i))) i++;
  return i;
}

/**
 * `find(pos)` = text.indexOf(token, pos), amortised linear when called with non-decreasing
 * positions: a miss is remembered, so repeated openers without a closer never rescan the tail.
 */
export function nextFinder(text: string, token: string): (pos: number) => number {
  let cached = -2;
  let from = 0;
  return (pos) => {
    if (cached === -1 && pos >= from) return -1;
    if (cached >= pos && pos >= from) return cached;
    from = pos;
    cached = text.indexOf(token, pos);
    return cached;
  };
}
