import { describe, expect, it } from "vitest";
import { rescue } from "./helpers.js";

describe("pythonic calls (Llama 3.2 / 4)", () => {
  it("single call with Python literals True/False/None and both quote styles", () => {
    expect(rescue("[get_weather(city='Paris', metric=True, hourly=False, region=None)]")).toEqual([
      { tool: "get_weather", args: { city: "Paris", metric: true, hourly: false, region: null } },
    ]);
  });

  it("parallel calls, nested lists/dicts/tuples, numbers, escapes and unicode", () => {
    const text = 'Here: [search(q="caf\\u00e9 \\"x\\"\\n", opts={"tags": ["a", ("b", 2)], "w": -1.5e2}), get_time()] done';
    expect(rescue(text)).toEqual([
      { tool: "search", args: { q: 'café "x"\n', opts: { tags: ["a", ["b", 2]], w: -150 } } },
      { tool: "get_time", args: {} },
    ]);
  });

  it("Llama 4 <|python_start|> wrapper", () => {
    expect(rescue('<|python_start|>[get_time(tz="Europe/Paris")]<|python_end|>')).toEqual([
      { tool: "get_time", args: { tz: "Europe/Paris" } },
    ]);
  });

  it("negatives: positional args, unbracketed call, unknown tool, unclosed list, citations", () => {
    expect(rescue('[get_weather("Paris")]')).toEqual([]);
    expect(rescue('Call get_weather(city="Paris") to find out.')).toEqual([]);
    expect(rescue("[launch(code=1)]")).toEqual([]);
    expect(rescue('[get_weather(city="Paris"')).toEqual([]);
    expect(rescue("See [1] and [note(s)] for details.")).toEqual([]);
  });

  it("negatives: a subscript in code is not a call list", () => {
    expect(rescue('Use cache[get_weather(city="Paris")] to memoise it.')).toEqual([]);
    expect(rescue('rows[0][get_time(tz="UTC")] and f()[get_time(tz="UTC")]')).toEqual([]);
    expect(rescue('Calling: [get_time(tz="UTC")]')).toEqual([{ tool: "get_time", args: { tz: "UTC" } }]);
  });

  it("a list with one unknown tool keeps the known one only", () => {
    expect(rescue("[get_time(), reboot(now=True)]")).toEqual([{ tool: "get_time", args: {} }]);
  });
});

describe("Phi-4-mini functools[…]", () => {
  it("single and parallel", () => {
    expect(rescue('functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]')).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
    ]);
    expect(rescue('Sure functools[{"name": "get_time", "arguments": {}}, {"name": "search", "arguments": {"q": "ü"}}] ok')).toEqual([
      { tool: "get_time", args: {} },
      { tool: "search", args: { q: "ü" } },
    ]);
  });

  it("negatives: truncated list, prose mention", () => {
    expect(rescue('functools[{"name": "get_time", "arguments": {}')).toEqual([]);
    expect(rescue("Python's functools module has no get_time.")).toEqual([]);
  });
});
