/**
 * Newline-delimited JSON (Ollama's streaming format) as an async generator of parsed values.
 * A line that is not JSON makes the stream malformed: StreamError, which the stream-retry
 * wrapper answers with its one re-request. So does a line nested deeper than MAX_JSON_DEPTH
 * (core/json-text.ts): a model's arguments object that deep would overflow the stack of the
 * first JSON.stringify it meets, and could never pass the LLMResponse contract anyway.
 */
import { StreamError } from "../core/errors.js";
import { parseJsonText } from "../core/json-text.js";
import { MAX_JSON_DEPTH } from "../core/json-value.js";

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
    const parsed = parseJsonText(line, MAX_JSON_DEPTH);
    if (parsed.ok) {
      yield parsed.value;
      continue;
    }
    const shown = JSON.stringify(line.slice(0, 200));
    if (parsed.reason === "depth") throw new StreamError(`Malformed stream: a line nested deeper than ${MAX_JSON_DEPTH} levels ${shown}`);
    throw new StreamError(`Malformed stream: invalid JSON line ${shown}`, { cause: parsed.cause });
  }
}
