import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { conversationKey, lastSuccess, readConversation } from "../../src/clients/simulated-view.js";

const specs = [{ name: "a", description: "", parameters: { type: "object" } }];

describe("readConversation", () => {
  it("matches OpenAI results to calls by tool_call_id, in any order", () => {
    const wire: WireMessage[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "do it" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "x1", type: "function", function: { name: "a", arguments: '{"n":1}' } },
          { id: "x2", type: "function", function: { name: "b", arguments: '{"n":2}' } },
        ],
      },
      { role: "tool", content: "[ToolError] b: boom", tool_call_id: "x2", name: "b" },
      { role: "tool", content: "ok", tool_call_id: "x1", name: "a" },
    ];
    const { view, corrected } = readConversation(wire, specs);
    expect(view).toEqual({
      results: [
        { tool: "b", args: { n: 2 }, content: "[ToolError] b: boom", isError: true, callId: "x2" },
        { tool: "a", args: { n: 1 }, content: "ok", isError: false, callId: "x1" },
      ],
      userInput: "do it",
      toolNames: ["a"],
      turn: 1,
    });
    expect(corrected).toBe(true);
    expect(lastSuccess(view)?.tool).toBe("a");
  });

  it("matches Ollama results by order and keeps non-object args visible", () => {
    const wire: WireMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", tool_calls: [{ function: { name: "a", arguments: { _invalid_arguments: [1, 2] } } }, { function: { name: "b", arguments: { k: "v" } } }] },
      { role: "tool", content: "[InvalidArguments] a", tool_name: "a" },
      { role: "tool", content: "fine", tool_name: "b" },
      { role: "assistant", content: "Let me think." },
    ];
    const { view, corrected } = readConversation(wire);
    expect(view.results.map((r) => [r.tool, r.args, r.isError])).toEqual([
      ["a", { _invalid_arguments: [1, 2] }, true],
      ["b", { k: "v" }, false],
    ]);
    expect(view.turn).toBe(2);
    expect(corrected).toBe(false); // the latest assistant turn has not been answered yet
  });

  it("treats a user message after an assistant turn as a retry nudge (corrected)", () => {
    const wire: WireMessage[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: "prose" },
      { role: "user", content: "Your last reply was plain text" },
    ];
    const { view, corrected } = readConversation(wire);
    expect(view.userInput).toBe("first");
    expect(corrected).toBe(true);
  });

  it("keeps unparseable OpenAI argument strings and orphan results", () => {
    const wire: WireMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "a", arguments: "part=1" } }] },
      { role: "tool", content: "[InvalidArguments] a", tool_call_id: "c" },
      { role: "tool", content: "late", tool_call_id: "gone", name: "z" },
    ];
    const { view } = readConversation(wire);
    expect(view.results[0]!.args).toEqual({ _invalid_arguments: "part=1" });
    expect(view.results[1]).toEqual({ tool: "z", args: {}, content: "late", isError: false, callId: "gone" });
  });

  it("fails loudly on conversations it cannot read", () => {
    expect(() => readConversation([{ role: "system", content: "s" }])).toThrow(InvalidArgumentError);
    expect(() => readConversation([{ role: "robot", content: "s" } as unknown as WireMessage])).toThrow(/unknown role/);
    expect(() => readConversation([{ role: "user", content: "q" }, { role: "tool", content: "x" }])).toThrow(/names no tool/);
  });

  it("conversationKey ignores call ids but not content, names or args", () => {
    const wire = (id: string, args: string): WireMessage[] => [
      { role: "user", content: "q" },
      { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name: "a", arguments: args } }] },
      { role: "tool", content: "r", tool_call_id: id, name: "a" },
    ];
    expect(conversationKey(wire("id1", "{}"), ["a"])).toBe(conversationKey(wire("id2", "{}"), ["a"]));
    expect(conversationKey(wire("id1", "{}"), ["a"])).not.toBe(conversationKey(wire("id1", '{"x":1}'), ["a"]));
    expect(conversationKey(wire("id1", "{}"), ["a"])).not.toBe(conversationKey(wire("id1", "{}"), ["a", "b"]));
  });
});
