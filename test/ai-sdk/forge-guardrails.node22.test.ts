/**
 * forgeGuardrails() around an AI SDK 7 MockLanguageModelV4 that writes calls as small models
 * do: the AI SDK's own loops (generateText, streamText, ToolLoopAgent) see clean tool calls and
 * JSON, while the wrapped model is retried with the proxy's nudges inside one model call.
 */
import { generateText, isStepCount, Output, streamText, tool, ToolLoopAgent, wrapLanguageModel } from "ai-v7";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { forgeGuardrails, GuardrailsExhaustedError, type ProxyGuardrailEvent } from "../../src/ai-sdk.js";
import { hermes, messageText, mistral, scriptedModel, type PromptView, type Reply } from "./support/mock-model.js";

function weatherTools(executed: unknown[]) {
  return {
    get_weather: tool({
      description: "Current temperature in a city, in °C",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        executed.push(city);
        return { city, celsius: 21 };
      },
    }),
  };
}

/** First a call as text (or a misspelled native call), then the answer once a result is in. */
const firstCall = (first: Reply) => (v: PromptView): Reply => {
  if (v.results > 0) return { text: "It is 21 °C in Oslo." };
  return v.retry ? { calls: [{ name: "get_weather", args: { city: "Oslo" }, id: "fixed" }] } : first;
};

function guarded(script: (v: PromptView) => Reply, events: ProxyGuardrailEvent[] = []) {
  const inner = scriptedModel(script);
  const model = wrapLanguageModel({ model: inner, middleware: forgeGuardrails({ onGuardrail: (e) => events.push(e) }) });
  return { inner, model, events };
}

describe("forgeGuardrails with MockLanguageModelV4", () => {
  it.each([
    ["Hermes <tool_call>", hermes("get_weather", { city: "Oslo" }), "hermes"],
    ["Mistral [TOOL_CALLS]", mistral("get_weather", { city: "Oslo" }), "mistral"],
  ])("generateText: a %s text call is rescued into a tool call and the tool runs", async (_name, text, format) => {
    const executed: unknown[] = [];
    const { inner, model, events } = guarded(firstCall({ text }));
    const result = await generateText({ model, tools: weatherTools(executed), stopWhen: isStepCount(5), prompt: "Weather in Oslo?" });
    expect(result.text).toBe("It is 21 °C in Oslo.");
    expect(executed).toEqual(["Oslo"]);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["get_weather", { city: "Oslo" }]]);
    expect(result.steps[0]!.finishReason).toBe("tool-calls");
    expect(inner.doGenerateCalls).toHaveLength(2); // no retry: the rescue is enough
    expect(events).toEqual([{ type: "guardrail.rescue", format, attempt: 1 }]);
    expect(result.steps[0]!.providerMetadata?.forge).toEqual({ attempts: 1, rescued: true });
  });

  it("rescued text arguments are typed from the tool's input schema (Qwen3-Coder XML call)", async () => {
    const seen: unknown[] = [];
    const forecast = tool({
      description: "Forecast",
      inputSchema: z.object({ city: z.string(), days: z.number() }),
      execute: async (args) => (seen.push(args), "sunny"),
    });
    const xml = "<tool_call>\n<function=forecast>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
    const { model } = guarded((v) => (v.results > 0 ? { text: "Sunny." } : { text: xml }));
    const result = await generateText({ model, tools: { forecast }, stopWhen: isStepCount(3), prompt: "Forecast for Oslo?" });
    expect(seen).toEqual([{ city: "Oslo", days: 3 }]);
    expect(result.text).toBe("Sunny.");
  });

  it("streamText: a rescued stream yields tool-call parts, and the loop continues", async () => {
    const executed: unknown[] = [];
    const { inner, model } = guarded(firstCall({ text: `Let me check. ${hermes("get_weather", { city: "Oslo" })}` }));
    const result = streamText({ model, tools: weatherTools(executed), stopWhen: isStepCount(5), prompt: "Weather in Oslo?" });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(await result.text).toBe("It is 21 °C in Oslo.");
    expect(executed).toEqual(["Oslo"]);
    expect(types).toContain("tool-call");
    expect(types).toContain("tool-result");
    const steps = await result.steps;
    expect(steps[0]!.text).toBe("Let me check.");
    expect(steps[0]!.toolCalls.map((c) => c.input)).toEqual([{ city: "Oslo" }]);
    expect(inner.doStreamCalls).toHaveLength(2);
  });

  it("a misspelled tool is retried inside the call with the unknown-tool nudge; the loop never sees it", async () => {
    const executed: unknown[] = [];
    const { inner, model, events } = guarded(firstCall({ calls: [{ name: "get_wether", args: { city: "Oslo" } }] }));
    const result = await generateText({ model, tools: weatherTools(executed), stopWhen: isStepCount(5), prompt: "Weather in Oslo?" });
    expect(result.text).toBe("It is 21 °C in Oslo.");
    expect(result.steps).toHaveLength(2);
    expect(JSON.stringify(result.steps.map((s) => s.content))).not.toContain("get_wether");
    expect(executed).toEqual(["Oslo"]);
    // Model calls: the misspelling, its retry (same AI SDK step), the answer.
    expect(inner.doGenerateCalls).toHaveLength(3);
    const retryPrompt = inner.doGenerateCalls[1]!.prompt;
    const nudge = messageText(retryPrompt.at(-1)!);
    expect(nudge).toMatch(/get_wether[\s\S]*get_weather/);
    expect(retryPrompt.at(-2)).toMatchObject({ role: "assistant", content: [{ type: "tool-call", toolName: "get_wether" }] });
    // The AI SDK's own history holds no failed attempt.
    expect(JSON.stringify(inner.doGenerateCalls[2]!.prompt)).not.toContain("get_wether");
    expect(events.map((e) => e.type)).toEqual(["guardrail.nudge"]);
    expect(result.steps[0]!.toolCalls[0]!.toolCallId).toBe("fixed");
  });

  it("invalid arguments are retried with the invalid-arguments nudge naming the field", async () => {
    const executed: unknown[] = [];
    const { inner, model } = guarded(firstCall({ calls: [{ name: "get_weather", args: { town: "Oslo" } }] }));
    await generateText({ model, tools: weatherTools(executed), stopWhen: isStepCount(5), prompt: "Weather in Oslo?" });
    expect(executed).toEqual(["Oslo"]);
    expect(messageText(inner.doGenerateCalls[1]!.prompt.at(-1)!)).toContain("city");
  });

  it("ToolLoopAgent runs its loop on the guarded model", async () => {
    const executed: unknown[] = [];
    const { model } = guarded(firstCall({ text: hermes("get_weather", { city: "Oslo" }) }));
    const agent = new ToolLoopAgent({ model, tools: weatherTools(executed), stopWhen: isStepCount(5) });
    const result = await agent.generate({ prompt: "Weather in Oslo?" });
    expect(result.text).toBe("It is 21 °C in Oslo.");
    expect(executed).toEqual(["Oslo"]);
  });

  it.each([false, true])("json output is validated and retried with the structured-output nudge (stream %s)", async (stream) => {
    const schema = z.object({ city: z.string(), celsius: z.number() });
    const { inner, model, events } = guarded((v) => (v.retry ? { text: 'Sure! ```json\n{"city": "Oslo", "celsius": 21}\n```' } : { text: '{"city": "Oslo"}' }));
    const args = { model, output: Output.object({ schema }), prompt: "Weather in Oslo as JSON" };
    const output = stream ? await streamText(args).output : (await generateText(args)).output;
    expect(output).toEqual({ city: "Oslo", celsius: 21 });
    const calls = stream ? inner.doStreamCalls : inner.doGenerateCalls;
    expect(calls).toHaveLength(2);
    expect(messageText(calls[1]!.prompt.at(-1)!)).toContain("celsius");
    expect(events.map((e) => e.type === "guardrail.nudge" && e.kind)).toEqual(["structured_output"]);
  });

  it("a spent budget throws GuardrailsExhaustedError by default, or returns the last answer marked", async () => {
    const always = () => ({ calls: [{ name: "get_wether", args: { city: "Oslo" } }] });
    const inner = scriptedModel(always);
    const model = wrapLanguageModel({ model: inner, middleware: forgeGuardrails({ maxRetries: 1, maxToolErrors: 1 }) });
    const error = await generateText({ model, tools: weatherTools([]), prompt: "Weather?", maxRetries: 0 }).catch((e: unknown) => e);
    expect(GuardrailsExhaustedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "FORGE_GUARDRAILS_EXHAUSTED", attempts: 2 });
    expect(inner.doGenerateCalls).toHaveLength(2);

    const lenient = wrapLanguageModel({ model: scriptedModel(always), middleware: forgeGuardrails({ maxRetries: 1, maxToolErrors: 1, onExhausted: "return" }) });
    const result = await generateText({ model: lenient, tools: weatherTools([]), prompt: "Weather?" });
    expect(result.providerMetadata?.forge).toMatchObject({ attempts: 2, exhausted: { reason: "retries" } });
  });

  it("a call with nothing to judge goes straight to the model, streams included", async () => {
    const { inner, model, events } = guarded(() => ({ text: hermes("get_weather", { city: "Oslo" }) }));
    expect((await generateText({ model, prompt: "hi" })).text).toContain("<tool_call>");
    const stream = streamText({ model, prompt: "hi" });
    expect(await stream.text).toContain("<tool_call>");
    expect(inner.doGenerateCalls).toHaveLength(1);
    expect(inner.doStreamCalls).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it("the model's own errors are rethrown as they were", async () => {
    const boom = new Error("backend down");
    const model = wrapLanguageModel({
      model: scriptedModel(() => {
        throw boom;
      }),
      middleware: forgeGuardrails(),
    });
    await expect(generateText({ model, tools: weatherTools([]), prompt: "Weather?", maxRetries: 0 })).rejects.toBe(boom);
  });

  it("the caller's abort cancels the call", async () => {
    const controller = new AbortController();
    const model = wrapLanguageModel({
      model: scriptedModel(() => {
        controller.abort(new DOMException("stop", "AbortError"));
        return { text: "too late" };
      }),
      middleware: forgeGuardrails(),
    });
    const error = await generateText({ model, tools: weatherTools([]), prompt: "Weather?", abortSignal: controller.signal, maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AbortError" });
  });

  it("bad options are named", () => {
    expect(() => forgeGuardrails({ maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => forgeGuardrails({ onExhausted: "ignore" as "throw" })).toThrow(/onExhausted/);
  });
});
