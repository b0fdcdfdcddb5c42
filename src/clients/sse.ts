/**
 * Server-sent events (the OpenAI-compatible streaming format) as an async generator.
 * Follows the WHATWG event-stream rules we need: `data:` lines of one event are joined with
 * "\n", a blank line dispatches, `:` lines are comments, `event:` names the event.
 * One non-standard field is kept: llama.cpp's server reports a mid-stream failure as an
 * `error: {json}` line (then `data: [DONE]`); it becomes an event named "error" so the
 * failure cannot vanish as an unknown field.
 */
import { readLines } from "./ndjson.js";

export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * @example
 * for await (const { data } of parseSse(res.body)) if (data === "[DONE]") break;
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  let data: string[] = [];
  let event: string | undefined;
  for await (const line of readLines(body)) {
    if (line === "") {
      if (data.length > 0) yield event === undefined ? { data: data.join("\n") } : { event, data: data.join("\n") };
      data = [];
      event = undefined;
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "error") {
      event = "error";
      data.push(value);
    }
  }
  // A last event without its blank line still counts: some servers close right after it.
  if (data.length > 0) yield event === undefined ? { data: data.join("\n") } : { event, data: data.join("\n") };
}
