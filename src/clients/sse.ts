/**
 * Server-sent events (OpenAI-compatible and Anthropic streaming) as an async generator, on the
 * maintained `eventsource-parser` (WHATWG event-stream rules: multi-line data joined with "\n",
 * comments skipped, `event:` names the event, CR/LF/CRLF line ends).
 * One non-standard field is kept: llama.cpp's server reports a mid-stream failure as an
 * `error: {json}` line (then `data: [DONE]`); it becomes an event named "error" so the
 * failure cannot vanish as an unknown field.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { StreamError } from "../core/errors.js";

export interface SseEvent {
  event?: string;
  data: string;
}

/** One event may not grow past this (a server that never sends a blank line). */
const MAX_EVENT_BYTES = 64 * 1024 * 1024;

/**
 * @example
 * for await (const { data } of parseSse(res.body)) if (data === "[DONE]") break;
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const queue: SseEvent[] = [];
  let failure: StreamError | undefined;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent: (message: EventSourceMessage) => {
      queue.push(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data });
    },
    onError: (error) => {
      if (error.type === "unknown-field" && error.field === "error") queue.push({ event: "error", data: error.value ?? "" });
      else if (error.type === "max-buffer-size-exceeded") failure ??= new StreamError(`Malformed stream: ${error.message}`);
      // Other unknown fields (id, retry are known) carry nothing the clients read.
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    yield* queue.splice(0);
  }
  // A last event without its blank line still counts: some servers close right after it.
  parser.feed(`${decoder.decode()}\n\n`);
  if (failure) throw failure;
  yield* queue.splice(0);
}
