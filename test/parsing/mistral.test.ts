import { describe, expect, it } from "vitest";
import { rescue } from "./helpers.js";

describe("Mistral [TOOL_CALLS]", () => {
  it("array form (v0.3 / Nemo) keeps ids; parallel in order", () => {
    const text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}, {"name": "get_time", "arguments": {}, "id": "f5g6h7i8j"}]';
    expect(rescue(text)).toEqual([
      { tool: "get_weather", args: { city: "Paris" }, id: "a1b2c3d4e" },
      { tool: "get_time", args: {}, id: "f5g6h7i8j" },
    ]);
  });

  it("[ARGS] form with and without [CALL_ID], parallel, unicode, nested", () => {
    const text = 'Okay.[TOOL_CALLS]search[CALL_ID]Xy12Ab34c[ARGS]{"q": "Zürich ☀", "opts": {"n": [1, 2]}}[TOOL_CALLS]get_time[ARGS]{}';
    expect(rescue(text)).toEqual([
      { tool: "search", args: { q: "Zürich ☀", opts: { n: [1, 2] } }, id: "Xy12Ab34c" },
      { tool: "get_time", args: {} },
    ]);
  });

  it("compact form name{…} and arguments given as a JSON string", () => {
    expect(rescue('[TOOL_CALLS]get_weather{"city": "Nice"}')).toEqual([{ tool: "get_weather", args: { city: "Nice" } }]);
    expect(rescue('[TOOL_CALLS] [{"name": "get_weather", "arguments": "{\\"city\\": \\"Nice\\"}"}]')).toEqual([
      { tool: "get_weather", args: { city: "Nice" } },
    ]);
  });

  it("rehearsal syntax name[ARGS]{…} without [TOOL_CALLS], in prose", () => {
    const text = 'I will now run:\nget_weather[ARGS]{"city": "Paris"}\nsearch[ARGS]{"q": "x"}\nand report.';
    expect(rescue(text)).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
      { tool: "search", args: { q: "x" } },
    ]);
  });

  it("negatives: truncated args, unknown tool, marker alone, mention in prose, inside [THINK]", () => {
    expect(rescue('[TOOL_CALLS]get_weather[ARGS]{"city": "Par')).toEqual([]);
    expect(rescue('[TOOL_CALLS]shutdown[ARGS]{}')).toEqual([]);
    expect(rescue("[TOOL_CALLS]")).toEqual([]);
    expect(rescue("Use the get_weather[ARGS] syntax to call tools.")).toEqual([]);
    expect(rescue('[THINK]maybe [TOOL_CALLS]get_time[ARGS]{}[/THINK]No call needed.')).toEqual([]);
  });
});
