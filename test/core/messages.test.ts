import { describe, expect, it } from "vitest";
import { MessageRole, MessageType, NUDGE_TYPES, createMessage, messageText, type ToolCallInfo } from "../../src/core/messages.js";

const call = (name: string, args: unknown, callId = `call_${name}`): ToolCallInfo => ({ name, args, callId });
const user = createMessage("user", "Weather in Paris?", MessageType.USER_INPUT);
const assistantCall = createMessage("assistant", "", MessageType.TOOL_CALL, {
  toolCalls: [call("get_weather", { city: "Paris" }, "c1")],
  stepIndex: 1,
});
const toolResult = createMessage("tool", "72F", MessageType.TOOL_RESULT, { toolName: "get_weather", toolCallId: "c1", stepIndex: 1 });

describe("MessageRole / MessageType", () => {
  it("have the seed's values, plus prerequisite_nudge", () => {
    expect(Object.values(MessageRole)).toEqual(["system", "user", "assistant", "tool"]);
    expect(MessageType.PREREQUISITE_NUDGE).toBe("prerequisite_nudge");
    expect(new Set(Object.values(MessageType))).toEqual(
      new Set([
        "system_prompt",
        "user_input",
        "tool_call",
        "tool_result",
        "reasoning",
        "text_response",
        "step_nudge",
        "prerequisite_nudge",
        "retry_nudge",
        "summary",
      ]),
    );
  });

  it("NUDGE_TYPES holds exactly the three nudges", () => {
    expect([...NUDGE_TYPES].sort()).toEqual(["prerequisite_nudge", "retry_nudge", "step_nudge"]);
    expect(NUDGE_TYPES.has(MessageType.USER_INPUT)).toBe(false);
  });
});

describe("createMessage", () => {
  it("builds meta from type and optional stepIndex", () => {
    expect(createMessage("user", "hi", MessageType.USER_INPUT)).toEqual({ role: "user", content: "hi", meta: { type: "user_input" } });
    expect(createMessage("user", "hi", MessageType.USER_INPUT)).not.toHaveProperty("meta.stepIndex");
    expect(createMessage("user", "go on", MessageType.RETRY_NUDGE, { stepIndex: 0 }).meta).toEqual({ type: "retry_nudge", stepIndex: 0 });
  });

  it("copies the tool fields and keeps stepIndex out of the top level", () => {
    expect(toolResult).toEqual({
      role: "tool",
      content: "72F",
      meta: { type: "tool_result", stepIndex: 1 },
      toolName: "get_weather",
      toolCallId: "c1",
    });
    expect(toolResult).not.toHaveProperty("stepIndex");
    expect(assistantCall.toolCalls).toEqual([{ name: "get_weather", args: { city: "Paris" }, callId: "c1" }]);
  });

  it("produces plain JSON data", () => {
    expect(JSON.parse(JSON.stringify(assistantCall))).toEqual(assistantCall);
  });
});

describe("messageText", () => {
  it("is the content for plain messages", () => {
    expect(messageText(user)).toBe("Weather in Paris?");
  });

  it("renders calls as name(json), after any content", () => {
    expect(messageText(assistantCall)).toBe('get_weather({"city":"Paris"})');
    const m = createMessage("assistant", "Checking.", MessageType.TOOL_CALL, { toolCalls: [call("a", { x: 1 }), call("b", "raw")] });
    expect(messageText(m)).toBe('Checking.\na({"x":1})\nb(raw)');
  });
});
