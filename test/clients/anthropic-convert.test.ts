import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WireMessage } from "../../src/core/wire-messages.js";
import {
  UNPAIRED_TOOL_RESULT,
  toAnthropicMessages,
  toAnthropicToolChoice,
  toAnthropicToolId,
  toAnthropicTools,
} from "../../src/clients/anthropic-convert.js";

const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("toAnthropicMessages", () => {
  it("extracts system messages (all of them, in order) into system", () => {
    const parts = toAnthropicMessages([
      { role: "system", content: "You are terse." },
      { role: "user", content: "hi" },
      { role: "system", content: "Summary: earlier steps done." },
      { role: "user", content: "go on" },
    ]);
    expect(parts.system).toBe("You are terse.\n\nSummary: earlier steps done.");
    expect(parts.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "go on" }] },
    ]);
  });

  it("turns tool_calls into tool_use blocks with parsed input, and role=tool into tool_result inside a user turn", () => {
    const wire: WireMessage[] = [
      { role: "user", content: "Weather in Paris and Rome?" },
      { role: "assistant", content: "Checking both.", tool_calls: [call("toolu_1", "get_weather", '{"city":"Paris"}'), call("toolu_2", "get_weather", '{"city":"Rome"}')] },
      { role: "tool", content: "20C", tool_call_id: "toolu_1", name: "get_weather" },
      { role: "tool", content: "[ToolError] upstream down", tool_call_id: "toolu_2", name: "get_weather" },
    ];
    const { messages, system } = toAnthropicMessages(wire);
    expect(system).toBeUndefined();
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking both." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "20C" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "[ToolError] upstream down", is_error: true },
        ],
      },
    ]);
  });

  it("answers unpaired tool_use with a synthetic is_error tool_result before the next user text", () => {
    const { messages } = toAnthropicMessages([
      { role: "user", content: "do it" },
      { role: "assistant", content: null, tool_calls: [call("a", "step_one", "{}"), call("b", "finish", "{}")] },
      { role: "tool", content: "ok", tool_call_id: "a" },
      { role: "user", content: "You must call step_two before finish." },
    ]);
    expect(messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: "ok" },
        { type: "tool_result", tool_use_id: "b", content: UNPAIRED_TOOL_RESULT, is_error: true },
        { type: "text", text: "You must call step_two before finish." },
      ],
    });
  });

  it("closes tool_use left open at the end of the history", () => {
    const { messages } = toAnthropicMessages([
      { role: "user", content: "x" },
      { role: "assistant", content: "", tool_calls: [call("z", "t", '{"a":1}')] },
    ]);
    expect(messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "z", content: UNPAIRED_TOOL_RESULT, is_error: true }] });
  });

  it("merges consecutive same-role messages and drops empty text", () => {
    const { messages } = toAnthropicMessages([
      { role: "user", content: "a" },
      { role: "user", content: "" },
      { role: "user", content: "b" },
      { role: "assistant", content: "c" },
      { role: "assistant", content: "d" },
    ]);
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      { role: "assistant", content: [{ type: "text", text: "c" }, { type: "text", text: "d" }] },
    ]);
  });

  it("keeps malformed or non-object arguments visible, sanitizes ids on both sides, and keeps orphan results as text", () => {
    const { messages } = toAnthropicMessages([
      { role: "user", content: "x" },
      { role: "assistant", content: null, tool_calls: [call("call:1", "t", '{"a":'), call("call:2", "t", "[1,2]")] },
      { role: "tool", content: "r1", tool_call_id: "call:1" },
      { role: "tool", content: "r2", tool_call_id: "call:2" },
      { role: "tool", content: "late", tool_call_id: "ghost", name: "t" },
    ]);
    expect(messages[1]!.content).toEqual([
      { type: "tool_use", id: "call_1", name: "t", input: { _invalid_arguments: '{"a":' } },
      { type: "tool_use", id: "call_2", name: "t", input: { _invalid_arguments: [1, 2] } },
    ]);
    expect(messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "call_1", content: "r1" },
      { type: "tool_result", tool_use_id: "call_2", content: "r2" },
      { type: "text", text: "[result of t]\nlate" },
    ]);
  });

  it("replays captured thinking blocks before the tool_use they produced", () => {
    const thinking = [{ type: "thinking" as const, thinking: "plan", signature: "sig" }];
    const { messages } = toAnthropicMessages(
      [
        { role: "user", content: "x" },
        { role: "assistant", content: "", tool_calls: [call("toolu_9", "t", "{}")] },
        { role: "tool", content: "done", tool_call_id: "toolu_9" },
      ],
      { thinkingFor: (id) => (id === "toolu_9" ? thinking : undefined) },
    );
    expect(messages[1]!.content).toEqual([...thinking, { type: "tool_use", id: "toolu_9", name: "t", input: {} }]);
  });

  it("property: output alternates roles, starts each tool_result turn with results, and pairs every tool_use", () => {
    const msg = fc.oneof(
      fc.record({ role: fc.constant("user" as const), content: fc.string({ maxLength: 5 }) }),
      fc.record({ role: fc.constant("system" as const), content: fc.string({ maxLength: 5 }) }),
      fc.record({
        role: fc.constant("assistant" as const),
        content: fc.option(fc.string({ maxLength: 5 }), { nil: null }),
        tool_calls: fc.array(fc.constantFrom("a", "b", "c").map((id) => call(id, "t", "{}")), { maxLength: 2 }),
      }),
      fc.record({ role: fc.constant("tool" as const), content: fc.string({ maxLength: 5 }), tool_call_id: fc.constantFrom("a", "b", "c", "x") }),
    );
    fc.assert(
      fc.property(fc.array(msg, { maxLength: 12 }), (wire) => {
        const { messages } = toAnthropicMessages(wire as WireMessage[]);
        for (let i = 1; i < messages.length; i++) expect(messages[i]!.role).not.toBe(messages[i - 1]!.role);
        messages.forEach((m, i) => {
          const blocks = m.content as { type: string; id?: string; tool_use_id?: string; text?: string }[];
          for (const b of blocks) if (b.type === "text") expect(b.text!.length).toBeGreaterThan(0);
          const firstOther = blocks.findIndex((b) => b.type !== "tool_result");
          if (firstOther >= 0) expect(blocks.slice(firstOther).some((b) => b.type === "tool_result")).toBe(false);
          const uses = blocks.filter((b) => b.type === "tool_use").map((b) => b.id);
          if (uses.length > 0) {
            const next = (messages[i + 1]?.content ?? []) as typeof blocks;
            const answered = next.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
            for (const id of uses) expect(answered).toContain(id);
          }
        });
      }),
    );
  });
});

describe("tool wiring", () => {
  it("maps specs and tool_choice", () => {
    expect(toAnthropicTools([{ name: "t", description: "d", parameters: { type: "object", properties: {} } }])).toEqual([
      { name: "t", description: "d", input_schema: { type: "object", properties: {} } },
    ]);
    expect(toAnthropicToolChoice("auto")).toEqual({ type: "auto" });
    expect(toAnthropicToolChoice("any")).toEqual({ type: "any" });
    expect(toAnthropicToolChoice({ type: "tool", name: "t" })).toEqual({ type: "tool", name: "t" });
    expect(toAnthropicToolId(undefined, "fallback")).toBe("fallback");
  });
});
