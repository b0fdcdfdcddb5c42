import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseNdjson } from "../../src/clients/ndjson.js";
import { StreamError } from "../../src/core/errors.js";
import { jsonValue } from "../support/arbitraries.js";

async function parse(chunks: (string | Uint8Array)[]): Promise<unknown[]> {
  const out: unknown[] = [];
  async function* source() {
    yield* chunks;
  }
  for await (const v of parseNdjson(source())) out.push(v);
  return out;
}

describe("parseNdjson", () => {
  it("parses lines, skips blank ones, accepts CRLF and a last line without newline", async () => {
    expect(await parse(['{"a":1}\r\n\n{"b":', '2}\n{"c":3}'])).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it("an invalid line is a StreamError naming the line", async () => {
    await expect(parse(['{"a":1}\n{oops\n'])).rejects.toMatchObject({ code: "FORGE_STREAM", message: expect.stringContaining("{oops") });
  });

  it("a line nested deeper than MAX_JSON_DEPTH is a StreamError too, not a value that overflows the stack later", async () => {
    const deep = `{"message":{"tool_calls":[{"function":{"arguments":${"[".repeat(100_000)}${"]".repeat(100_000)}}}]}}`;
    await expect(parse(['{"a":1}\n', `${deep}\n`])).rejects.toThrow(StreamError);
    await expect(parse([`${deep}\n`])).rejects.toThrow(/Malformed stream: a line nested deeper than 512 levels/);
    await expect(parse([`${"[".repeat(512)}${"]".repeat(512)}\n`])).resolves.toHaveLength(1);
  });

  it("property: values survive any chunking of the encoded stream", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(jsonValue(), { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }), async (values, cuts) => {
        const bytes = new TextEncoder().encode(values.map((v) => `${JSON.stringify(v)}\n`).join(""));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const parts: Uint8Array[] = [];
        let last = 0;
        for (const p of [...points, bytes.length]) {
          parts.push(bytes.slice(last, p));
          last = p;
        }
        // JSON drops -0's sign; compare through JSON like the wire does.
        expect(await parse(parts)).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))));
      }),
      { numRuns: 100 },
    );
  });
});
