/**
 * The stream a judged `wrapStream` call returns while its run is still going: prose released by
 * the streaming judge (src/parsing/stream-judge.ts, through the proxy's LiveRelease) goes out as
 * text-delta parts, reasoning as it arrives; the judged answer's parts (guarded-result.ts
 * streamParts) follow with only what the live parts did not carry.
 */
import type { LanguageModelV4ResponseMetadata, LanguageModelV4StreamPart, LanguageModelV4StreamResult, SharedV4Warning } from "@ai-sdk/provider";
import { LiveRelease, NOTHING_SENT, type DeltaChannel } from "../proxy-request/live-release.js";
import { REASONING_ID, TEXT_ID, type StreamedSoFar } from "./guarded-result.js";
import type { AttemptSink } from "./model-attempt.js";

/**
 * @example
 * const live = new LiveParts();
 * const sink = live.attempt(["get_weather"], result); // hand to streamedAttempt
 * await live.started; // the first live part is in live.stream
 */
export class LiveParts {
  readonly so: StreamedSoFar = { started: false, open: { text: false, reasoning: false }, sent: NOTHING_SENT };
  readonly stream: ReadableStream<LanguageModelV4StreamPart>;
  /** Resolves when the first live part went into `stream`. */
  readonly started: Promise<void>;
  /** The request and response records of the attempt whose text went out. */
  records: Pick<LanguageModelV4StreamResult, "request" | "response"> = {};
  private controller!: ReadableStreamDefaultController<LanguageModelV4StreamPart>;
  private onStarted!: () => void;
  private warnings: SharedV4Warning[] = [];
  private metadata: LanguageModelV4ResponseMetadata | undefined;

  constructor() {
    this.stream = new ReadableStream({ start: (c) => void (this.controller = c) });
    this.started = new Promise((resolve) => (this.onStarted = resolve));
  }

  /** A sink for one model attempt; its prose is judged against `toolNames`. */
  attempt(toolNames: readonly string[], records: Pick<LanguageModelV4StreamResult, "request" | "response">): AttemptSink {
    const release = new LiveRelease(toolNames, (channel, text) => this.emit(channel, text, records));
    this.so.sent = release.sent;
    return {
      warnings: (w) => void (this.warnings = w),
      metadata: (m) => void (this.metadata = m),
      delta: (channel, text) => release.delta(channel, text),
    };
  }

  /** The judged answer's parts (or the failure) after the live ones; ends the stream. */
  finish(parts: LanguageModelV4StreamPart[] | { error: unknown }): void {
    if (Array.isArray(parts)) {
      for (const part of parts) this.controller.enqueue(part);
      this.controller.close();
    } else this.controller.error(parts.error);
  }

  private emit(channel: DeltaChannel, text: string, records: Pick<LanguageModelV4StreamResult, "request" | "response">): void {
    if (!this.so.started) {
      this.so.started = true;
      this.records = records;
      this.controller.enqueue({ type: "stream-start", warnings: this.warnings });
      if (this.metadata !== undefined) this.controller.enqueue({ type: "response-metadata", ...this.metadata });
      this.onStarted();
    }
    const kind = channel === "content" ? "text" : "reasoning";
    const id = kind === "text" ? TEXT_ID : REASONING_ID;
    if (!this.so.open[kind]) {
      this.so.open[kind] = true;
      this.controller.enqueue({ type: `${kind}-start`, id });
    }
    this.controller.enqueue({ type: `${kind}-delta`, id, delta: text });
  }
}
