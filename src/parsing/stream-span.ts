/**
 * A construct the streaming judge holds until it closes: a code fence (to the next ```) or a
 * bracketed span (`{…}`, `[…]`, `(…)` nesting, quotes and escapes respected). Its closing scan
 * keeps its state in the span and resumes where the last delta left off, so a span is read once
 * however many deltas it arrives in.
 */
import type { StreamText } from "./stream-text.js";

export interface OpenSpan {
  start: number;
  /** Next position to read. */
  at: number;
  fence: boolean;
  depth: number;
  quote: number | undefined;
  escaped: boolean;
}

const BACKTICK = 0x60;
const FENCE_LENGTH = 3;

export function openSpan(start: number, body: number, fence: boolean): OpenSpan {
  return { start, at: body, fence, depth: 0, quote: undefined, escaped: false };
}

/** End of the span once it has closed in `text`, else -1 (it stays open; `span.at` moved on). */
export function closeSpan(text: StreamText, span: OpenSpan): number {
  if (span.fence) {
    for (; span.at + FENCE_LENGTH <= text.length; span.at++) {
      if (text.code(span.at) === BACKTICK && text.code(span.at + 1) === BACKTICK && text.code(span.at + 2) === BACKTICK) return span.at + FENCE_LENGTH;
    }
    return -1;
  }
  for (; span.at < text.length; span.at++) {
    const c = text.code(span.at);
    if (span.quote !== undefined) {
      if (span.escaped) span.escaped = false;
      else if (c === 0x5c /* \ */) span.escaped = true;
      else if (c === span.quote) span.quote = undefined;
    } else if (c === 0x22 || c === 0x27) span.quote = c;
    else if (c === 0x7b || c === 0x5b || c === 0x28) span.depth++;
    else if ((c === 0x7d || c === 0x5d || c === 0x29) && --span.depth === 0) return span.at + 1;
  }
  return -1;
}
