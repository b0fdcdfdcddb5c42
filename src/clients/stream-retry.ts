/**
 * The streaming contract every HTTP client shares: an attempt yields deltas and ends with one
 * FINAL chunk. A malformed attempt (invalid JSON, stream ended without its end marker) is
 * re-requested exactly once, announced by a RETRY chunk so consumers drop the partial output;
 * a second failure is a StreamError. HTTP errors and aborts are not stream faults and pass
 * through untouched (the loop owns retries).
 */
import { ForgeError, StreamError } from "../core/errors.js";
import type { StreamChunk, Usage } from "../core/llm.js";

export function isStreamError(error: unknown): error is StreamError {
  return ForgeError.isInstance(error) && error.code === "FORGE_STREAM";
}

/**
 * @example
 * yield* withStreamRetry(() => this.streamOnce(body, signal), () => { this.streamRetries++; });
 */
export async function* withStreamRetry(
  attempt: () => AsyncIterable<StreamChunk>,
  onRetry: (reason: string) => void,
): AsyncGenerator<StreamChunk> {
  for (let round = 0; ; round++) {
    let failure: StreamError;
    try {
      for await (const chunk of attempt()) {
        yield chunk;
        if (chunk.type === "final") return;
      }
      failure = new StreamError("Stream ended without FINAL chunk");
    } catch (error) {
      if (!isStreamError(error)) throw error;
      failure = error;
    }
    if (round >= 1) {
      throw new StreamError(`Stream failed again after one re-request: ${failure.message}`, { cause: failure });
    }
    onRetry(failure.message);
    yield { type: "retry", reason: failure.message };
  }
}

/** The per-client figures a stream updates: re-requests made and the last usage seen. */
export interface StreamStats {
  streamRetries: number;
  lastUsage: Usage | undefined;
}

/**
 * `withStreamRetry` plus the bookkeeping every client does around it.
 *
 * @example
 * sendStream(messages, tools, opts) { return trackedStream(() => this.streamOnce(messages, tools, opts.signal), this); }
 */
export async function* trackedStream(attempt: () => AsyncIterable<StreamChunk>, stats: StreamStats): AsyncGenerator<StreamChunk> {
  for await (const chunk of withStreamRetry(attempt, () => stats.streamRetries++)) {
    if (chunk.type === "final") stats.lastUsage = chunk.response.usage;
    yield chunk;
  }
}
