/**
 * A streaming request's response (server-sent events, or Ollama's NDJSON). Headers wait until there is something to say — the
 * outcome, the first live delta, or the first keep-alive tick — so a backend that fails fast
 * still gets the caller a real 502/504 status. After that the stream carries the deltas the run
 * releases and keep-alive pings while the proxy validates and retries, then the rest of the
 * answer's frames, or an error event.
 */
import type { Context } from "hono";
import { HttpError, toHttpError, type Dialect } from "../proxy-request/http-error.js";
import type { RunResult } from "./request-run.js";
import type { SseFrame, StreamEncoder } from "./sse-frames.js";

export interface StreamedRequest {
  dialect: Dialect;
  encoder: StreamEncoder;
  /** Server-sent events, or one JSON object per line (Ollama: each frame's data is a line). */
  wire: "sse" | "ndjson";
  keepAliveMs: number;
  /** Starts the run; the run decides which text may go out through `onDelta` before the answer is judged. */
  start(onDelta: (channel: "content" | "reasoning", text: string) => void): Promise<RunResult>;
  /** Aborts the run (the caller went away). */
  abort(reason: string): void;
  /** Called once, when the response (or its stream) is finished. */
  done(result: RunResult): void;
  /** The response for an outcome that is not an answer, before anything was streamed. */
  failure(result: RunResult): Response;
  headers: Record<string, string>;
}

export async function streamedResponse(c: Context, r: StreamedRequest): Promise<Response> {
  const queue: SseFrame[] = [];
  let result: RunResult | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  // The opening frames are made before the first delta's: encoders that number their events
  // (the Responses API's sequence_number) number them in the order they are sent.
  let opened = false;
  const open = (): SseFrame[] => (opened ? [] : ((opened = true), r.encoder.open()));
  const running = r.start((channel, text) => (queue.push(...open(), ...r.encoder.delta(channel, text)), notify()));
  void running.then((res) => ((result = res), notify()));

  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    wake = resolve;
    timer = setTimeout(notify, r.keepAliveMs);
  });
  clearTimeout(timer);
  if (result !== undefined && result.outcome.kind !== "answer") {
    r.done(result);
    return r.failure(result);
  }

  for (const [name, value] of Object.entries(r.headers)) c.header(name, value);
  const render = r.wire === "sse" ? sseText : ndjsonText;
  const stream = byteStream(() => r.abort("client disconnected"));
  const body = async (): Promise<void> => {
    // Every frame ready goes out in one write: a backend's burst of deltas costs one socket
    // write, not one per delta (and no write once the caller left: its run was aborted).
    const send = async (frames: readonly SseFrame[]) => {
      if (frames.length > 0 && !stream.cancelled) await stream.write(render(frames));
    };
    const ping = setInterval(() => void send([r.encoder.ping()]), r.keepAliveMs);
    try {
      await send(open());
      for (;;) {
        if (queue.length > 0) await send(queue.splice(0));
        else if (result !== undefined) break;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearInterval(ping);
    }
    const { outcome } = result;
    if (outcome.kind === "answer") {
      await send(r.encoder.finish(outcome, result.sent));
    } else if (outcome.kind === "failed") {
      await send(r.encoder.error(toHttpError(outcome.error)));
    } else if (!stream.cancelled) {
      await send(r.encoder.error(new HttpError(503, "api_error", `Request cancelled: ${outcome.reason}`)));
    }
    r.done(result);
  };
  if (r.wire === "sse") {
    c.header("content-type", "text/event-stream");
    c.header("cache-control", "no-cache");
    c.header("connection", "keep-alive");
  } else {
    c.header("content-type", "application/x-ndjson");
  }
  void body()
    .catch((error: unknown) => console.error("forge-ts proxy: a stream's writer failed", error))
    .finally(() => stream.close());
  return c.newResponse(stream.readable);
}

/**
 * The response body as a byte stream the writer feeds directly: one web stream between the run
 * and the socket (Hono's stream helper puts a TransformStream and a writer in between, which cost
 * more per delta than the rest of the proxy's work on it). A write waits while the caller reads
 * slower than the backend writes; `onCancel` runs when the caller goes away.
 */
function byteStream(onCancel: () => void) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let pulled: (() => void) | undefined;
  let cancelled = false;
  let closed = false;
  const resume = () => {
    const p = pulled;
    pulled = undefined;
    p?.();
  };
  const readable = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: resume,
      cancel: () => {
        cancelled = true;
        resume();
        onCancel();
      },
    },
    { highWaterMark: 16 },
  );
  return {
    readable,
    get cancelled() {
      return cancelled;
    },
    async write(text: string): Promise<void> {
      if (cancelled || closed) return;
      controller.enqueue(Buffer.from(text));
      if ((controller.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (pulled = resolve));
    },
    close(): void {
      if (cancelled || closed) return;
      closed = true;
      controller.close();
    },
  };
}

/** Frames as server-sent events: a data line per line of data (as the SSE format requires). */
export function sseText(frames: readonly SseFrame[]): string {
  let text = "";
  for (const frame of frames) {
    if ("comment" in frame) text += `: ${frame.comment}\n\n`;
    else text += `${frame.event === undefined ? "" : `event: ${frame.event}\n`}data: ${frame.data.includes("\n") || frame.data.includes("\r") ? frame.data.split(/\r\n|\r|\n/).join("\ndata: ") : frame.data}\n\n`;
  }
  return text;
}

/** Frames as Ollama's NDJSON: each data a line; comments (keep-alive) have no form there. */
export function ndjsonText(frames: readonly SseFrame[]): string {
  let text = "";
  for (const frame of frames) if (!("comment" in frame)) text += `${frame.data}\n`;
  return text;
}
