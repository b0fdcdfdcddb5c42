/**
 * The AI SDK call as the machine's request, and the machine's retries back as prompt messages.
 * Pure and type-only against @ai-sdk/provider, so this runs on Node 20 too.
 */
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { attemptPrompt, callRequest } from "../../src/ai-sdk/call-request.js";
import { createMessage, MessageType } from "../../src/core/messages.js";

const schema = { type: "object" as const, properties: { city: { type: "string" as const } }, required: ["city"] };
const params: LanguageModelV4CallOptions = {
  prompt: [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "get_weather", input: { city: "Oslo" } }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "get_weather", output: { type: "error-text", value: "timeout" } }] },
  ],
  tools: [
    { type: "function", name: "get_weather", description: "Weather", inputSchema: schema },
    { type: "provider", id: "openai.web_search", name: "web_search", args: {} },
  ],
  toolChoice: { type: "tool", toolName: "get_weather" },
  responseFormat: { type: "json", schema, name: "weather" },
};

describe("callRequest", () => {
  it("reads tools, tool choice, output format and the history from the call", () => {
    const request = callRequest(params, "qwen3:8b", true);
    expect(request.tools).toEqual([
      { name: "get_weather", description: "Weather", parameters: schema },
      { name: "web_search", description: "", parameters: {} },
    ]);
    expect(request.toolChoice).toEqual({ type: "function", function: { name: "get_weather" } });
    expect(request.format).toEqual({ kind: "json_schema", name: "weather", schema, strict: false });
    expect(request.messages.map((m) => [m.role, m.meta.type])).toEqual([
      ["system", "system_prompt"],
      ["user", "user_input"],
      ["assistant", "tool_call"],
      ["tool", "tool_result"],
    ]);
    expect(request.failedCallIds).toEqual(["c1"]);
    expect(request.stream).toBe(true);
  });

  it("a json format without a schema is json_object; no tool choice stays undefined", () => {
    const request = callRequest({ prompt: [], responseFormat: { type: "json" } }, "m", false);
    expect(request.format).toEqual({ kind: "json_object" });
    expect(request.toolChoice).toBeUndefined();
  });
});

describe("attemptPrompt", () => {
  it("keeps the caller's prompt as it was and appends a blocked turn with its tool-channel answers as one tool message", () => {
    const appended = [
      createMessage("assistant", "Checking.", MessageType.TOOL_CALL, {
        toolCalls: [
          { name: "get_wether", args: { city: "Oslo" }, callId: "x1" },
          { name: "get_weather", args: {}, callId: "x2" },
        ],
      }),
      createMessage("tool", "[UnknownTool] get_wether", MessageType.TOOL_RESULT, { toolName: "get_wether", toolCallId: "x1" }),
      createMessage("tool", "[InvalidArgs] city is required", MessageType.TOOL_RESULT, { toolName: "get_weather", toolCallId: "x2" }),
    ];
    const prompt = attemptPrompt(params.prompt, appended);
    expect(prompt.slice(0, 4)).toEqual(params.prompt);
    expect(prompt[3]!.content).toHaveLength(1); // the caller's tool message is not extended
    expect(prompt.slice(4)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool-call", toolCallId: "x1", toolName: "get_wether", input: { city: "Oslo" } },
          { type: "tool-call", toolCallId: "x2", toolName: "get_weather", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "x1", toolName: "get_wether", output: { type: "error-text", value: "[UnknownTool] get_wether" } },
          { type: "tool-result", toolCallId: "x2", toolName: "get_weather", output: { type: "error-text", value: "[InvalidArgs] city is required" } },
        ],
      },
    ]);
  });

  it("a text attempt and its user-channel nudge", () => {
    const appended = [createMessage("assistant", "It is sunny.", MessageType.TEXT_RESPONSE), createMessage("user", "Answer with JSON only.", MessageType.RETRY_NUDGE)];
    expect(attemptPrompt([], appended)).toEqual([
      { role: "assistant", content: [{ type: "text", text: "It is sunny." }] },
      { role: "user", content: [{ type: "text", text: "Answer with JSON only." }] },
    ]);
  });
});
