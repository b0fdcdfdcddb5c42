import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMessage } from "../../src/core/messages.js";
import type { ToolSpec } from "../../src/core/tool.js";
import {
  estimateMessageTokensChars4,
  estimateTokensChars4,
  estimateToolTokensChars4,
  MESSAGE_OVERHEAD_TOKENS,
} from "../../src/context/token-estimator.js";

describe("estimateTokensChars4", () => {
  it("charges ceil(chars / 4) plus a fixed overhead per message", () => {
    expect(MESSAGE_OVERHEAD_TOKENS).toBe(4);
    expect(estimateMessageTokensChars4(createMessage("user", "", "user_input"))).toBe(4);
    expect(estimateMessageTokensChars4(createMessage("user", "12345678", "user_input"))).toBe(6);
    expect(estimateMessageTokensChars4(createMessage("user", "123456789", "user_input"))).toBe(7);
  });

  it("counts tool calls through messageText (name and JSON arguments)", () => {
    const call = createMessage("assistant", "", "tool_call", {
      toolCalls: [{ name: "get_weather", args: { city: "Paris" }, callId: "c1" }],
    });
    // 'get_weather({"city":"Paris"})' is 29 characters
    expect(estimateMessageTokensChars4(call)).toBe(Math.ceil(29 / 4) + 4);
  });

  it("sums over the history", () => {
    const ms = [createMessage("system", "abcd", "system_prompt"), createMessage("user", "abcdefgh", "user_input")];
    expect(estimateTokensChars4(ms)).toBe(5 + 6);
    expect(estimateTokensChars4([])).toBe(0);
  });
});

describe("estimateToolTokensChars4", () => {
  const asStringified = (tools: readonly ToolSpec[]) =>
    tools.length === 0 ? 0 : Math.ceil(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))).length / 4);

  const spec = (text: fc.Arbitrary<string>) =>
    fc.record({ name: text, description: text, parameters: fc.dictionary(fc.string(), fc.jsonValue()) }) as fc.Arbitrary<ToolSpec>;

  it("is chars/4 of the tools as JSON when names and descriptions need no escapes", () => {
    const plain = fc.string({ unit: "grapheme" }).map((s) => s.replace(/["\\\u0000-\u001f]/g, ""));
    fc.assert(fc.property(fc.array(spec(plain), { maxLength: 6 }), (tools) => estimateToolTokensChars4(tools) === asStringified(tools)));
  });

  it("counts names and descriptions as text: never more than the JSON, short of it by the escapes alone", () => {
    fc.assert(
      fc.property(fc.array(spec(fc.string({ unit: "binary" })), { maxLength: 6 }), (tools) => {
        const escapes = tools.reduce((n, t) => n + JSON.stringify(t.name).length + JSON.stringify(t.description).length - t.name.length - t.description.length - 4, 0);
        const json = tools.length === 0 ? 0 : JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))).length;
        const estimate = estimateToolTokensChars4(tools);
        return estimate <= asStringified(tools) && (tools.length === 0 ? estimate === 0 : estimate === Math.ceil((json - escapes) / 4));
      }),
    );
  });

  it("counts a schema seen before from its kept text", () => {
    const weather: ToolSpec = { name: "get_weather", description: "Weather now", parameters: { type: "object", properties: { city: { type: "string" } } } };
    expect(estimateToolTokensChars4([weather])).toBe(asStringified([weather]));
    expect(estimateToolTokensChars4([weather, weather])).toBe(asStringified([weather, weather]));
  });
});
