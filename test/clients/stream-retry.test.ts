import { describe, expect, it } from "vitest";
import { BackendError, StreamError } from "../../src/core/errors.js";
import type { StreamChunk } from "../../src/core/llm.js";
import { withStreamRetry } from "../../src/clients/stream-retry.js";

const FINAL: StreamChunk = { type: "final", response: { type: "text", content: "ok" } };
const DELTA: StreamChunk = { type: "text_delta", content: "o" };

async function run(attempts: (() => AsyncGenerator<StreamChunk>)[]) {
  let calls = 0;
  const reasons: string[] = [];
  const chunks: StreamChunk[] = [];
  let error: unknown;
  try {
    for await (const c of withStreamRetry(() => attempts[calls++]!(), (r) => reasons.push(r))) chunks.push(c);
  } catch (e) {
    error = e;
  }
  return { calls, reasons, chunks, error };
}

describe("withStreamRetry", () => {
  it("passes a good stream through and stops at FINAL", async () => {
    const r = await run([
      async function* () {
        yield DELTA;
        yield FINAL;
        yield DELTA; // never reached
      },
    ]);
    expect(r.chunks).toEqual([DELTA, FINAL]);
    expect(r.calls).toBe(1);
  });

  it("re-requests once after a malformed attempt, announcing RETRY", async () => {
    const r = await run([
      async function* () {
        yield DELTA;
        throw new StreamError("Malformed stream: bad line");
      },
      async function* () {
        yield FINAL;
      },
    ]);
    expect(r.chunks).toEqual([DELTA, { type: "retry", reason: "Malformed stream: bad line" }, FINAL]);
    expect(r.reasons).toEqual(["Malformed stream: bad line"]);
  });

  it("a stream that ends without FINAL twice is a StreamError", async () => {
    const empty = async function* (): AsyncGenerator<StreamChunk> {
      yield DELTA;
    };
    const r = await run([empty, empty]);
    expect(r.calls).toBe(2);
    expect(r.error).toBeInstanceOf(StreamError);
    expect((r.error as Error).message).toMatch(/without FINAL/);
  });

  it("HTTP errors and aborts are not retried", async () => {
    const http = await run([
      async function* (): AsyncGenerator<StreamChunk> {
        throw new BackendError(503, "busy");
      },
    ]);
    expect(http.calls).toBe(1);
    expect(http.error).toBeInstanceOf(BackendError);
    const abort = await run([
      async function* (): AsyncGenerator<StreamChunk> {
        throw new DOMException("aborted", "AbortError");
      },
    ]);
    expect(abort.calls).toBe(1);
    expect((abort.error as Error).name).toBe("AbortError");
  });
});
