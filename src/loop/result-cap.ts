/**
 * `maxResultChars`: what a tool result feeds back to the model, cut to a budget with a marker
 * that says how much was left out, so a small model with a small context is not flooded by one
 * large result. The caller keeps the whole result (the run's result, `toolEnd` events).
 */

/** What {@link capResult} gives back: the text for the model, and whether it was cut. */
export interface CappedResult {
  content: string;
  /** Set when the text was cut: how many chars it had and how many the model sees before the marker. */
  truncated?: { total: number; kept: number };
}

/**
 * `content` unchanged when it is at most `maxChars` long; otherwise its first `maxChars` chars
 * (one fewer when the cut would split a surrogate pair) followed by a marker naming the true
 * sizes, e.g. `… [truncated 12,345 of 20,000 chars]`.
 *
 * @example
 * capResult("abcdef", 4); // { content: "abcd… [truncated 2 of 6 chars]", truncated: { total: 6, kept: 4 } }
 * capResult("abc", 4);    // { content: "abc" }
 */
export function capResult(content: string, maxChars: number | undefined): CappedResult {
  if (maxChars === undefined || content.length <= maxChars) return { content };
  let kept = maxChars;
  // Half a surrogate pair is not text: a JSON encoder or a tokenizer would choke on it.
  const last = content.charCodeAt(kept - 1);
  if (kept > 0 && last >= 0xd800 && last <= 0xdbff) kept -= 1;
  const total = content.length;
  return { content: content.slice(0, kept) + truncationMarker(total - kept, total), truncated: { total, kept } };
}

/**
 * The marker appended to a cut result.
 *
 * @example
 * truncationMarker(12345, 20000); // "… [truncated 12,345 of 20,000 chars]"
 */
export function truncationMarker(removed: number, total: number): string {
  return `… [truncated ${grouped(removed)} of ${grouped(total)} chars]`;
}

/** Thousands with commas, independent of the process locale (tests and logs stay stable). */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * Checks a `maxResultChars` value: a positive safe integer, else the reason it is not.
 *
 * @example
 * maxResultCharsProblem(0); // "expected a positive integer number of characters, got 0"
 */
export function maxResultCharsProblem(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return undefined;
  return `expected a positive integer number of characters, got ${typeof value === "number" ? String(value) : typeof value}`;
}
