/** The stream writer's rendering of frames (src/proxy/sse-response.ts): one string per batch. */
import { describe, expect, it } from "vitest";
import { ndjsonText, sseText } from "../../src/proxy/sse-response.js";

describe("frames as text", () => {
  it("server-sent events: named and unnamed events, comments, a data line per line of data", () => {
    expect(sseText([{ data: '{"a":1}' }, { event: "message_start", data: "{}" }, { comment: "keep-alive" }, { data: "one\ntwo\r\nthree\rfour" }])).toBe(
      'data: {"a":1}\n\nevent: message_start\ndata: {}\n\n: keep-alive\n\ndata: one\ndata: two\ndata: three\ndata: four\n\n',
    );
    expect(sseText([])).toBe("");
  });

  it("NDJSON: each data a line; comments have no form there", () => {
    expect(ndjsonText([{ data: '{"done":false}' }, { comment: "keep-alive" }, { data: '{"done":true}' }])).toBe('{"done":false}\n{"done":true}\n');
  });
});
