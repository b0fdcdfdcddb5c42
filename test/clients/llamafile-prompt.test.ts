import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { downgradeMessages, injectToolPrompt, mergeConsecutive, toPromptModeMessages, type PlainMessage } from "../../src/clients/llamafile-prompt.js";
import type { OpenAIWireMessage } from "../../src/core/wire-messages.js";
import { buildToolPrompt } from "../../src/parsing/index.js";
import { TOOLS } from "./contract.js";

describe("downgradeMessages", () => {
  it("turns tool results into user turns and calls into fenced {tool, args} JSON", () => {
    const wire: OpenAIWireMessage[] = [
      {
        role: "assistant",
        content: "Checking both.",
        tool_calls: [
          { id: "a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "b", type: "function", function: { name: "get_weather", arguments: "{broken" } },
        ],
      },
      { role: "tool", content: "72F", tool_call_id: "a", name: "get_weather" },
      { role: "tool", content: "error", tool_call_id: "b" },
      { role: "assistant", content: null },
    ];
    expect(downgradeMessages(wire)).toEqual([
      {
        role: "assistant",
        content: 'Checking both.\n```json\n{"tool":"get_weather","args":{"city":"Paris"}}\n```\n```json\n{"tool":"get_weather","args":"{broken"}\n```',
      },
      { role: "user", content: 'Tool "get_weather" returned:\n72F' },
      { role: "user", content: "Tool returned:\nerror" },
      { role: "assistant", content: "" },
    ]);
  });
});

describe("mergeConsecutive", () => {
  const roleArb = fc.constantFrom<PlainMessage["role"]>("system", "user", "assistant");
  const messagesArb = fc.array(fc.record({ role: roleArb, content: fc.string() }), { maxLength: 12 });

  it("property: no two neighbours share a role, and no text is lost or reordered", () => {
    fc.assert(
      fc.property(messagesArb, (messages) => {
        const merged = mergeConsecutive(messages);
        for (let i = 1; i < merged.length; i++) expect(merged[i]!.role).not.toBe(merged[i - 1]!.role);
        const nonEmpty = (ms: PlainMessage[]) => ms.flatMap((m) => (m.content ? [m.content] : []));
        expect(nonEmpty(merged).join("\n\n")).toBe(nonEmpty(messages).join("\n\n"));
      }),
    );
  });

  it("does not mutate its input", () => {
    const input: PlainMessage[] = [{ role: "user", content: "a" }, { role: "user", content: "b" }];
    mergeConsecutive(input);
    expect(input).toEqual([{ role: "user", content: "a" }, { role: "user", content: "b" }]);
  });
});

describe("injectToolPrompt / toPromptModeMessages", () => {
  it("appends to a leading system message, or adds one", () => {
    expect(injectToolPrompt([{ role: "system", content: "Be brief." }], "TOOLS")).toEqual([{ role: "system", content: "Be brief.\n\nTOOLS" }]);
    expect(injectToolPrompt([{ role: "user", content: "hi" }], "TOOLS")).toEqual([
      { role: "system", content: "TOOLS" },
      { role: "user", content: "hi" },
    ]);
  });

  it("without tools only downgrades and merges", () => {
    const wire: OpenAIWireMessage[] = [
      { role: "user", content: "hi" },
      { role: "tool", content: "x", name: "t" },
    ];
    expect(toPromptModeMessages(wire, [])).toEqual([{ role: "user", content: 'hi\n\nTool "t" returned:\nx' }]);
    expect(toPromptModeMessages(wire, TOOLS)[0]).toEqual({ role: "system", content: buildToolPrompt(TOOLS) });
  });
});
