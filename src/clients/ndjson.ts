/**
 * Newline-delimited JSON (Ollama's streaming format) as an async generator of parsed values.
 * A line that is not JSON makes the stream malformed: StreamError, which the stream-retry
 * wrapper answers with its one re-request.
 */
import { StreamError } from "../core/errors.js";

/**
 * Split a byte stream into text lines (LF or CRLF). The last line is yielded even without a
 * trailing newline.
 *
 * @example
 * for await (const line of readLines(res.body)) console.log(line);
 */
export async function* readLines(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      yield stripCr(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
    }
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield stripCr(buffer);
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/**
 * Parse NDJSON: one JSON value per non-blank line.
 *
 * @example
 * for await (const event of parseNdjson(res.body)) if ((event as { done?: boolean }).done) break;
 */
export async function* parseNdjson(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<unknown> {
  for await (const line of readLines(body)) {
    if (line.trim().length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new StreamError(`Malformed stream: invalid JSON line ${JSON.stringify(line.slice(0, 200))}`, { cause });
    }
    yield value;
  }
}
