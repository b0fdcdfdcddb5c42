import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  contextLengthError,
  DEFAULT_OUTPUT_TOKENS,
  needsExactCount,
  NUM_CTX_FLOOR,
  numCtxFor,
  promptFits,
  requestedOutputTokens,
  withNumCtx,
} from "../../src/proxy-request/context-window.js";
import { errorRecord, HttpError, toHttpError } from "../../src/proxy-request/http-error.js";

const isPowerOfTwo = (n: number) => Number.isInteger(Math.log2(n));

describe("numCtxFor", () => {
  it("rounds prompt + output up the ladder of powers of two from 4096, capped at the model's maximum", () => {
    expect(numCtxFor({ promptTokens: 100, outputTokens: 100 })).toBe(4096);
    expect(numCtxFor({ promptTokens: 4000, outputTokens: 97 })).toBe(8192);
    expect(numCtxFor({ promptTokens: 20_000, outputTokens: 4_000, contextLength: 40_960 })).toBe(32_768);
    expect(numCtxFor({ promptTokens: 30_000, outputTokens: 4_000, contextLength: 40_960 })).toBe(40_960);
    expect(numCtxFor({ promptTokens: 100, contextLength: 2048 })).toBe(2048);
  });

  it("plans DEFAULT_OUTPUT_TOKENS of output when the caller set no max", () => {
    expect(numCtxFor({ promptTokens: 4096 - DEFAULT_OUTPUT_TOKENS })).toBe(4096);
    expect(numCtxFor({ promptTokens: 4097 - DEFAULT_OUTPUT_TOKENS })).toBe(8192);
  });

  it("never goes below the last num_ctx used for the model (no reload back and forth)", () => {
    expect(numCtxFor({ promptTokens: 100, previous: 16_384 })).toBe(16_384);
    expect(numCtxFor({ promptTokens: 100, previous: 16_384, contextLength: 8192 })).toBe(8192);
  });

  it("property: at most the cap, at least the need (or the cap), at least the previous, on the ladder", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500_000 }),
        fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: 512, max: 1_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 300_000 }), { nil: undefined }),
        (promptTokens, outputTokens, contextLength, previous) => {
          const n = numCtxFor({ promptTokens, outputTokens, contextLength, previous });
          const needed = promptTokens + (outputTokens ?? DEFAULT_OUTPUT_TOKENS);
          const cap = contextLength ?? Infinity;
          expect(n).toBeLessThanOrEqual(cap);
          expect(n).toBeGreaterThanOrEqual(Math.min(needed, cap));
          expect(n).toBeGreaterThanOrEqual(Math.min(previous ?? 0, cap));
          expect(n === contextLength || n === previous || (isPowerOfTwo(n) && n >= NUM_CTX_FLOOR)).toBe(true);
        },
      ),
    );
  });

  it("property: a growing prompt never gets a smaller num_ctx", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 200_000 }), fc.option(fc.integer({ min: 512, max: 300_000 }), { nil: undefined }), (a, b, contextLength) => {
        const [small, large] = a <= b ? [a, b] : [b, a];
        expect(numCtxFor({ promptTokens: small, contextLength })).toBeLessThanOrEqual(numCtxFor({ promptTokens: large, contextLength }));
      }),
    );
  });
});

describe("promptFits / needsExactCount / requestedOutputTokens", () => {
  it("a prompt fits up to the window itself; an unknown window fits everything", () => {
    expect(promptFits(8192, 8192)).toBe(true);
    expect(promptFits(8193, 8192)).toBe(false);
    expect(promptFits(1e9, undefined)).toBe(true);
  });

  it("asks for an exact count only near the window", () => {
    expect(needsExactCount(6000, 8000)).toBe(true);
    expect(needsExactCount(12_000, 8000)).toBe(true);
    expect(needsExactCount(5999, 8000)).toBe(false);
    expect(needsExactCount(12_001, 8000)).toBe(false);
    expect(needsExactCount(8000, undefined)).toBe(false);
  });

  it("reads max_completion_tokens, then max_tokens; anything else is no max", () => {
    expect(requestedOutputTokens({ max_completion_tokens: 512, max_tokens: 64 })).toBe(512);
    expect(requestedOutputTokens({ max_tokens: 64 })).toBe(64);
    expect(requestedOutputTokens({ max_tokens: "64", max_completion_tokens: -1 })).toBeUndefined();
    expect(requestedOutputTokens({})).toBeUndefined();
  });

  it("withNumCtx sets options.num_ctx beside the caller's other options, without touching the input", () => {
    const body = { temperature: 0, options: { top_k: 20 } };
    expect(withNumCtx(body, 8192)).toEqual({ temperature: 0, options: { top_k: 20, num_ctx: 8192 } });
    expect(body.options).toEqual({ top_k: 20 });
    expect(withNumCtx(undefined, 4096)).toEqual({ options: { num_ctx: 4096 } });
    expect(withNumCtx({ options: "nonsense" }, 4096)).toEqual({ options: { num_ctx: 4096 } });
  });
});

describe("contextLengthError", () => {
  it("renders OpenAI's context_length_exceeded and Anthropic's 'prompt is too long' exactly", () => {
    const error = contextLengthError(9000, 8192);
    expect(error.status).toBe(400);
    expect(error.body("openai")).toEqual({
      error: {
        message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    });
    expect(error.body("anthropic")).toEqual({ type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 9000 tokens > 8192 maximum" } });
  });

  it("property: survives the request machine (errorRecord → JSON → toHttpError) unchanged in every dialect", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: 10_000_000 }), (n, m) => {
        const error = contextLengthError(n, m);
        const back = toHttpError(JSON.parse(JSON.stringify(errorRecord(error))));
        expect(back.status).toBe(400);
        for (const dialect of ["openai", "anthropic"] as const) expect(back.body(dialect)).toEqual(error.body(dialect));
      }),
    );
  });

  it("other HttpErrors keep their type through the machine, and render param/code null as before", () => {
    const error = new HttpError(404, "not_found_error", "no such thing");
    expect(toHttpError(errorRecord(error)).body("openai")).toEqual({ error: { type: "not_found_error", message: "no such thing", param: null, code: null } });
  });
});
