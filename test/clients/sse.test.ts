import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSse, type SseEvent } from "../../src/clients/sse.js";

async function events(chunks: string[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  async function* source() {
    for (const c of chunks) yield new TextEncoder().encode(c);
  }
  for await (const e of parseSse(source())) out.push(e);
  return out;
}

describe("parseSse", () => {
  it("joins multi-line data, names events, skips comments, handles CRLF", async () => {
    const text = ": keep-alive\r\nevent: delta\r\ndata: a\r\ndata: b\r\n\r\ndata:no-space\n\ndata: [DONE]\n\n";
    expect(await events([text])).toEqual([{ event: "delta", data: "a\nb" }, { data: "no-space" }, { data: "[DONE]" }]);
  });

  it("keeps llama.cpp's non-standard `error:` line as an event named error; other unknown fields are ignored", async () => {
    const text = 'id: 7\nretry: 100\ndata: {"a":1}\n\nerror: {"code":400,"message":"too long"}\n\ndata: [DONE]\n\n';
    expect(await events([text])).toEqual([{ data: '{"a":1}' }, { event: "error", data: '{"code":400,"message":"too long"}' }, { data: "[DONE]" }]);
  });

  it("yields a last event that lacks its blank line", async () => {
    expect(await events(["data: {\"x\":1}\n"])).toEqual([{ data: '{"x":1}' }]);
  });

  it("property: any split of the byte stream gives the same events", async () => {
    const payload = fc.array(fc.string({ unit: fc.constantFrom("a", "é", "{", "}", ":", " ", "😀") }), { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(payload, fc.array(fc.nat(), { maxLength: 8 }), async (datas, cuts) => {
        const text = datas.map((d) => `data: ${d}\n\n`).join("");
        const bytes = new TextEncoder().encode(text);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const parts: Uint8Array[] = [];
        let last = 0;
        for (const p of [...points, bytes.length]) {
          parts.push(bytes.slice(last, p));
          last = p;
        }
        const out: SseEvent[] = [];
        async function* source() {
          yield* parts;
        }
        for await (const e of parseSse(source())) out.push(e);
        expect(out).toEqual(datas.map((d) => ({ data: d })));
      }),
      { numRuns: 100 },
    );
  });
});
