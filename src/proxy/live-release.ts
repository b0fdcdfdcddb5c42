/**
 * What of one backend attempt's answer has reached a streaming caller. Per-request I/O, not
 * machine context: the machine still judges the whole answer; this only decides which deltas
 * may go out before it does (src/parsing/stream-judge.ts) and remembers what went, so the final
 * frames send only the rest.
 */
import { StreamError } from "../core/errors.js";
import { createStreamJudge, type StreamJudge } from "../parsing/stream-judge.js";
import type { SentText } from "./sse-frames.js";

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

  /** The client re-requests after a malformed stream: only possible while nothing went out. */
  restart(reason: string): void {
    if (this.sent.content !== "" || this.sent.reasoning !== "") {
      throw new StreamError(`Backend stream broke after part of the answer was sent (${reason}); it cannot be taken back`);
    }
    this.judge = this.newJudge();
  }
}
