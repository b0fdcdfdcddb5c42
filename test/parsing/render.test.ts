import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { RESCUE_FORMATS, renderToolCalls, rescueToolCall, supportsParallel } from "../../src/parsing/index.js";

const calls = [
  { tool: "get_weather", args: { city: "Paris", opts: { days: [1, 2], metric: true, note: null } }, id: "abcDEF123" },
  { tool: "get_time", args: {} },
];

describe("renderToolCalls", () => {
  it("covers all 21 families", () => {
    expect(RESCUE_FORMATS).toHaveLength(21);
  });

  for (const format of RESCUE_FORMATS) {
    it(`${format}: renders and parses back`, () => {
      const batch = supportsParallel(format) ? calls : calls.slice(0, 1);
      const parsed = rescueToolCall(renderToolCalls(batch, format), ["get_weather", "get_time"]);
      expect(parsed.map(({ tool, args }) => ({ tool, args }))).toEqual(batch.map(({ tool, args }) => ({ tool, args })));
    });
  }

  it("keeps ids in formats that carry them", () => {
    expect(rescueToolCall(renderToolCalls(calls.slice(0, 1), "mistral_args"), ["get_weather"])[0]?.id).toBe("abcDEF123");
    expect(rescueToolCall(renderToolCalls(calls.slice(0, 1), "mistral_array"), ["get_weather"])[0]?.id).toBe("abcDEF123");
    expect(rescueToolCall(renderToolCalls([{ tool: "get_time", args: {} }], "kimi"), ["get_time"])[0]?.id).toBe("functions.get_time:0");
  });

  it("rejects bad input loudly", () => {
    expect(() => renderToolCalls([], "hermes")).toThrow(InvalidArgumentError);
    expect(() => renderToolCalls(calls, "llama_python_tag")).toThrow(/one call per output/);
    expect(() => renderToolCalls(calls, "nope" as never)).toThrow(/unknown rescue format/);
  });
});
