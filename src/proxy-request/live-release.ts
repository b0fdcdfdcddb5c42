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
 * The part of an answer's `full` text the caller has not seen, given the `sent` prefix. The
 * judged answer may differ from the streamed text in whitespace only (rescue trims and folds
 * blank lines around the calls it cuts out), so whitespace runs are skipped on both sides;
 * where the texts part otherwise (framing tokens a rescue strips), the rest of `full` is sent:
 * repeating a little beats losing text.
 *
 * @example
 * unsent("Checking.\n\nIt is sunny.", "Checking.\n"); // "\nIt is sunny."
 * unsent("Checking. It is sunny.", "Checking.\n");   // "It is sunny."
 * unsent("Checking.", "Checking. ");                  // ""
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
  return full.slice(i);
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
