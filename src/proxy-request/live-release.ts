/**
 * What of one attempt's answer has reached a streaming caller (the proxy's SSE client, or the
 * AI SDK caller of forgeGuardrails' wrapStream). Per-request I/O, not machine context: the
 * machine still judges the whole answer; this only decides which deltas may go out before it
 * does (src/parsing/stream-judge.ts) and remembers what went, so the final frames or parts
 * carry only the rest (`unsent`).
 */
import { StreamError } from "../core/errors.js";
import { createStreamJudge, type StreamJudge } from "../parsing/stream-judge.js";

/** The answer's text that already reached the caller as live deltas (of the attempt that answered). */
export interface SentText {
  content: string;
  reasoning: string;
}

/** Nothing sent yet: the whole answer goes out at the end. */
export const NOTHING_SENT: SentText = Object.freeze({ content: "", reasoning: "" });

/**
 * The part of an answer's `full` text the caller has not seen, given the `sent` text. The judged
 * answer may differ from the streamed text in whitespace (rescue trims and folds blank lines
 * around the calls it cuts out), so whitespace runs are skipped on both sides. It may also lack
 * what came first in the stream: reasoning a model wrote inline (`<think>…</think>`, or only the
 * closing tag when the template opened it) is split off by the client at the end; then the
 * rest follows the longest start of `full` that `sent` ends with. Texts that start alike and part
 * later (framing tokens a rescue strips) continue after the common start. Where nothing
 * matches, all of `full` is sent: repeating text beats losing it.
 *
 * @example
 * unsent("Checking.\n\nIt is sunny.", "Checking.\n"); // "\nIt is sunny."
 * unsent("Checking. It is sunny.", "Checking.\n");   // "It is sunny."
 * unsent("Checking.", "Checking. ");                  // ""
 * unsent("It is sunny.", "<think>Oslo.</think>\nIt is"); // " sunny."
 */
export function unsent(full: string, sent: string): string {
  if (full.startsWith(sent)) return full.slice(sent.length);
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < full.length && /\s/.test(full[i]!)) i++;
    while (j < sent.length && /\s/.test(sent[j]!)) j++;
    if (j === sent.length || i === full.length || full[i] !== sent[j]) break;
    i++;
    j++;
  }
  // Both start alike and part later (framing tokens a rescue strips): what follows the common start.
  if (j === sent.length || sent.slice(0, j).trim() !== "") return full.slice(i);
  const lead = full.length - full.trimStart().length;
  return full.slice(lead + overlap(sent.trimEnd(), full.slice(lead)));
}

/** Length of the longest start of `b` that `a` ends with (KMP prefix function over b + a). */
function overlap(a: string, b: string): number {
  const s = `${b}\u0000${a}`;
  const pi = new Int32Array(s.length);
  for (let q = 1; q < s.length; q++) {
    let k = pi[q - 1]!;
    while (k > 0 && s[q] !== s[k]) k = pi[k - 1]!;
    if (s[q] === s[k]) k++;
    pi[q] = k;
  }
  return s.length === 0 ? 0 : pi[s.length - 1]!;
}

export type DeltaChannel = "content" | "reasoning";

/**
 * One attempt's live deltas: reasoning goes out as it comes; content goes through the streaming
 * judge when `toolNames` is given (a guarded request), as it comes otherwise.
 *
 * @example
 * const release = new LiveRelease(["get_weather"], (channel, text) => write(channel, text));
 * release.delta("content", "Checking. <tool_call>{…"); // writes "Checking. ", holds the call
 * release.sent; // { content: "Checking. ", reasoning: "" }
 */
export class LiveRelease {
  readonly sent: SentText = { content: "", reasoning: "" };
  private judge: StreamJudge | undefined;

  constructor(
    private readonly toolNames: readonly string[] | undefined,
    private readonly emit: (channel: DeltaChannel, text: string) => void,
  ) {
    this.judge = this.newJudge();
  }

  private newJudge(): StreamJudge | undefined {
    return this.toolNames === undefined ? undefined : createStreamJudge({ toolNames: this.toolNames });
  }

  delta(channel: DeltaChannel, text: string): void {
    const out = channel === "content" && this.judge !== undefined ? this.judge.feed(text) : text;
    if (out === "") return;
    this.sent[channel] += out;
    this.emit(channel, out);
  }

  /** The backend is asked again from the start (a client's re-request): only possible while nothing went out. */
  restart(reason: string): void {
    if (this.sent.content !== "" || this.sent.reasoning !== "") {
      throw new StreamError(`Backend stream broke after part of the answer was sent (${reason}); it cannot be taken back`);
    }
    this.judge = this.newJudge();
  }
}
