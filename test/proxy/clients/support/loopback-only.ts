/**
 * Client SDKs reach for the network on their own: tracing exporters (OpenAI Agents), tokenizer
 * downloads (js-tiktoken under LangChain), telemetry. For the test file that calls this, global
 * `fetch` refuses every address off loopback and remembers it, and each test must end with none.
 * SDKs capture `fetch` when they are constructed, so clients must be built inside tests.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * @example
 * loopbackOnly(); // at the top of a test file
 */
export function loopbackOnly(): void {
  const original = globalThis.fetch;
  const refused: string[] = [];
  beforeAll(() => {
    globalThis.fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!LOOPBACK.has(url.hostname)) {
        refused.push(url.origin);
        return Promise.reject(new TypeError(`test refused a request off loopback: ${url.origin}`));
      }
      return original(input, init);
    };
  });
  afterEach(() => {
    expect(refused.splice(0), "requests off loopback").toEqual([]);
  });
  afterAll(() => {
    globalThis.fetch = original;
  });
}
