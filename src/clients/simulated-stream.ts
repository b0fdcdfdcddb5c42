/**
 * Turning a decided LLMResponse into the stream a real backend would send, and abort
 * handling shared by the simulated and scripted clients.
 */
import type { LLMResponse, StreamChunk } from "../core/llm.js";
import type { Prng } from "./prng.js";

/**
 * The error an aborted request rejects with: the signal's reason, as undici does.
 *
 * @example
 * if (signal.aborted) throw abortError(signal);
 */
export function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/**
 * Throw the abort reason if `signal` is aborted.
 *
 * @example
 * throwIfAborted(options?.signal);
 */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

/**
 * Wait `ms` milliseconds, rejecting with the abort reason as soon as `signal` aborts.
 *
 * @example
 * await abortableDelay(50, controller.signal);
 */
export function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  throwIfAborted(signal);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Split text like a tokenizer-driven stream: fixed `chunkSize` characters when given,
 * otherwise one to three words (with their trailing whitespace) per delta.
 *
 * @example
 * splitDeltas("Hello there world", rng, 5); // ["Hello", " ther", "e wor", "ld"]
 */
export function splitDeltas(text: string, rng: Prng, chunkSize?: number): string[] {
  if (text.length === 0) return [];
  if (chunkSize !== undefined) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += chunkSize) out.push(text.slice(i, i + chunkSize));
    return out;
  }
  const words = text.match(/\s*\S+\s*|\s+/g) ?? [text];
  const out: string[] = [];
  for (let i = 0; i < words.length; ) {
    const take = 1 + rng.int(3);
    out.push(words.slice(i, i + take).join(""));
    i += take;
  }
  return out;
}

/**
 * Args as they travel on the wire: a JSON string (kept verbatim when already a string).
 *
 * @example
 * argsText({ a: 1 }); // '{"a":1}'
 */
export function argsText(args: unknown): string {
  return typeof args === "string" ? args : JSON.stringify(args);
}

/**
 * The deltas (without FINAL) a backend would stream for `response`: reasoning-channel text
 * first, then content text or one TOOL_CALL_DELTA run per call building its JSON arguments.
 *
 * @example
 * [...responseDeltas(textResponse("Hi there"), rng)]; // [{ type: "text_delta", content: "Hi there" }]
 */
export function* responseDeltas(response: LLMResponse, rng: Prng, chunkSize?: number): Generator<StreamChunk> {
  if (response.reasoning) {
    for (const piece of splitDeltas(response.reasoning, rng, chunkSize)) {
      yield { type: "text_delta", content: piece, channel: "reasoning" };
    }
  }
  if (response.type === "text") {
    for (const piece of splitDeltas(response.content, rng, chunkSize)) yield { type: "text_delta", content: piece, channel: "content" };
    return;
  }
  for (const [index, call] of response.toolCalls.entries()) {
    // Argument JSON arrives in small uneven pieces, as in OpenAI-style SSE streams.
    const pieces = splitDeltas(argsText(call.args), rng, chunkSize ?? 4 + rng.int(8));
    const head: StreamChunk & { type: "tool_call_delta" } = { type: "tool_call_delta", index, name: call.tool, content: pieces[0] ?? "" };
    if (call.id !== undefined) head.id = call.id;
    yield head;
    for (const piece of pieces.slice(1)) yield { type: "tool_call_delta", index, content: piece };
  }
}
