import { describe, expect, it } from "vitest";
import { createMessage } from "../../src/core/messages.js";
import {
  estimateMessageTokensChars4,
  estimateTokensChars4,
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
