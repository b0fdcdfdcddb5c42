import { describe, expect, it } from "vitest";
import { defaultScript, runForeignLoop } from "../../eval/examples/foreign-loop.js";
import { StepEnforcementError } from "../../src/core/errors.js";
import type { LLMResponse } from "../../src/core/llm.js";

describe("foreign loop example", () => {
  it("goes through retry, unknown tool, bad args, premature terminal, then succeeds", async () => {
    const lines: string[] = [];
    const { decisions, result, messages } = await runForeignLoop(defaultScript, (l) => lines.push(l));
    expect(decisions).toEqual(["retry", "tool_error", "tool_error", "step_blocked", "execute", "execute"]);
    expect(result).toBe("It is 21C and sunny in Paris.");
    expect(lines[0]).toMatch(/^turn 1: retry/);
    expect(lines.at(-1)).toBe("done: It is 21C and sunny in Paris.");

    const toolContents = messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));
    expect(toolContents[0]).toMatch(/^\[UnknownTool\] .*"get_forecast"/);
    expect(toolContents[1]).toMatch(/^\[InvalidArguments\][\s\S]*- city:/);
    expect(toolContents[2]).toMatch(/^\[StepEnforcementError\] .*"get_weather"/);
    expect(toolContents[3]).toBe("21C and sunny in Paris");
    // Every tool result answers a call id that an assistant message announced.
    const announced = new Set(messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : [])));
    for (const m of messages) if (m.role === "tool") expect(announced.has(m.tool_call_id)).toBe(true);
    // The retry nudge went on the user channel right after the bare text.
    expect(messages[2]).toMatchObject({ role: "assistant" });
    expect(messages[3]).toMatchObject({ role: "user" });
  });

  it("throws the typed fatal error when the model keeps skipping steps", async () => {
    const respond: LLMResponse = { type: "tool_calls", toolCalls: [{ tool: "respond", args: { message: "x" } }] };
    await expect(runForeignLoop([respond, respond, respond, respond], () => {})).rejects.toBeInstanceOf(StepEnforcementError);
  });

  it("resolution errors are fed back without counting against the budget", async () => {
    const call = (city: string): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city } }] });
    const finish: LLMResponse = { type: "tool_calls", toolCalls: [{ tool: "respond", args: { message: "ok" } }] };
    const run = await runForeignLoop([call("Atlantis"), call("Atlantis"), call("Atlantis"), call("Paris"), finish], () => {});
    expect(run.result).toBe("ok");
    expect(run.messages.some((m) => m.role === "tool" && m.content.startsWith("[ToolResolutionError] get_weather"))).toBe(true);
  });
});
