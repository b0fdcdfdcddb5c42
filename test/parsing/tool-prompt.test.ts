import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { buildToolPrompt, rescueToolCall } from "../../src/parsing/index.js";

const weather = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const time = { name: "get_time", description: "", parameters: { type: "object", properties: {} } };

describe("buildToolPrompt", () => {
  it("lists every tool with description and schema, and the fenced-JSON convention", () => {
    const p = buildToolPrompt([weather, time]);
    expect(p).toContain("### get_weather\nCurrent weather for a city");
    expect(p).toContain('"required":["city"]');
    expect(p).toContain("### get_time\n(no description)");
    expect(p).toContain('```json\n{"tool":"get_weather","args":{}}\n```');
  });

  it("is deterministic regardless of schema key order", () => {
    const reordered = { ...weather, parameters: { required: ["city"], properties: { city: { type: "string" } }, type: "object" } };
    expect(buildToolPrompt([reordered, time])).toBe(buildToolPrompt([weather, time]));
  });

  it("its own example is a call the rescuer reads", () => {
    const example = /```json\n.*\n```/.exec(buildToolPrompt([weather]))?.[0] ?? "";
    expect(rescueToolCall(example, ["get_weather"])).toEqual([{ tool: "get_weather", args: {} }]);
  });

  it("rejects bad tool lists", () => {
    expect(() => buildToolPrompt([])).toThrow(InvalidArgumentError);
    expect(() => buildToolPrompt([weather, weather])).toThrow(/duplicate/);
    expect(() => buildToolPrompt("x" as never)).toThrow(InvalidArgumentError);
    expect(() => buildToolPrompt([{ name: "a", description: "", parameters: null } as never])).toThrow(/parameters/);
  });
});
