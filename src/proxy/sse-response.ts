/**
 * A streaming request's response (server-sent events, or Ollama's NDJSON). Headers wait until there is something to say — the
 * outcome, the first live delta, or the first keep-alive tick — so a backend that fails fast
 * still gets the caller a real 502/504 status. After that the stream carries the deltas the run
 * releases and keep-alive pings while the proxy validates and retries, then the rest of the
 * answer's frames, or an error event.
 */
import type { Context } from "hono";
import { stream as streamBytes, streamSSE, type SSEStreamingApi } from "hono/streaming";
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
  const body = async (stream: StreamingApi, send: (frame: SseFrame) => Promise<void>): Promise<void> => {
    stream.onAbort(() => r.abort("client disconnected"));
    const ping = setInterval(() => void send(r.encoder.ping()), r.keepAliveMs);
    try {
      for (const f of open()) await send(f);
      for (;;) {
        while (queue.length > 0) await send(queue.shift()!);
        if (result !== undefined) break;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearInterval(ping);
    }
    const { outcome } = result;
    if (outcome.kind === "answer") {
      for (const f of r.encoder.finish(outcome, result.sent)) await send(f);
    } else if (outcome.kind === "failed") {
      for (const f of r.encoder.error(toHttpError(outcome.error))) await send(f);
    } else if (!stream.aborted) {
      for (const f of r.encoder.error(new HttpError(503, "api_error", `Request cancelled: ${outcome.reason}`))) await send(f);
    }
    r.done(result);
  };
  if (r.wire === "sse") return streamSSE(c, (stream) => body(stream, (frame) => writeSse(stream, frame)));
  c.header("content-type", "application/x-ndjson");
  return streamBytes(c, (stream) => body(stream, (frame) => writeLine(stream, frame)));
}

type StreamingApi = Parameters<Parameters<typeof streamBytes>[1]>[0];

/** A write to a caller that already left is dropped: its run was aborted through onAbort. */
async function writeSse(stream: SSEStreamingApi, frame: SseFrame): Promise<void> {
  if (stream.aborted || stream.closed) return;
  if ("comment" in frame) await stream.write(`: ${frame.comment}\n\n`);
  else await stream.writeSSE(frame.event === undefined ? { data: frame.data } : { event: frame.event, data: frame.data });
}

async function writeLine(stream: StreamingApi, frame: SseFrame): Promise<void> {
  if (stream.aborted || stream.closed || "comment" in frame) return;
  await stream.write(`${frame.data}\n`);
}
