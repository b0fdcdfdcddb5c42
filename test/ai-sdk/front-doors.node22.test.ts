/**
 * An AI SDK 7 app (`ai` 7 + `@ai-sdk/openai-compatible` 3) against a loopback backend that
 * writes calls as small models do, through either front door: the proxy, or forgeGuardrails()
 * around the provider. Same machine, same nudges, same outcome: the app's loop sees clean
 * calls and JSON, the backend sees the retries.
 */
import { generateText, isStepCount, Output, streamText, tool, ToolLoopAgent, type StepResult, type ToolSet } from "ai-v7";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loopbackOnly } from "../proxy/clients/support/loopback-only.js";
import { FINAL_ANSWER, isToolResult, messagesOf, nudgesIn, PROMPT, PROSE, smallModel, textOf } from "../proxy/clients/support/small-model.js";
import { CONVERSION_RESULT, convertTemperatureParams, getWeatherParams, TOOL_DESCRIPTIONS, WEATHER_RESULT, weatherTools, type WeatherTools } from "../proxy/clients/support/weather-tools.js";
import { hermes } from "../proxy/support/harness.js";
import { frontDoor, type Door } from "./support/front-doors.js";

loopbackOnly();

function toolSet(executor: WeatherTools) {
  return {
    get_weather: tool({ description: TOOL_DESCRIPTIONS.get_weather, inputSchema: getWeatherParams, execute: async (args) => executor.run("get_weather", args) }),
    convert_temperature: tool({ description: TOOL_DESCRIPTIONS.convert_temperature, inputSchema: convertTemperatureParams, execute: async (args) => executor.run("convert_temperature", args) }),
  };
}

function turnOf<TTools extends ToolSet>(step: StepResult<TTools>) {
  const text = step.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  const calls = step.content.flatMap((p) => (p.type === "tool-call" ? [{ name: p.toolName, args: p.input }] : []));
  return { text, calls };
}

const EXPECTED_CALLS = [[{ name: "get_weather", args: { city: "Oslo" } }], [{ name: "convert_temperature", args: { celsius: 21, to: "fahrenheit" } }], []];

const DOORS: [Door, boolean][] = [
  ["proxy", false],
  ["proxy", true],
  ["middleware", false],
  ["middleware", true],
];

describe.each(DOORS)("AI SDK 7 through the %s, stream %s", (door, stream) => {
  it("a multi-step loop runs past a misspelled tool, invalid arguments and a Hermes text call", async () => {
    const { model, chats } = await frontDoor(door, smallModel({ misspelling: "native" }));
    const executor = weatherTools();
    const args = { model, tools: toolSet(executor), stopWhen: isStepCount(5), prompt: PROMPT, maxRetries: 0 };
    const steps = stream ? await streamText(args).steps : (await generateText(args)).steps;
    const turns = steps.map(turnOf);
    expect(turns.map((t) => t.calls)).toEqual(EXPECTED_CALLS);
    expect(turns[1]!.text).toBe(PROSE);
    expect(turns.at(-1)!.text).toBe(FINAL_ANSWER);
    expect(executor.executions).toEqual(EXPECTED_CALLS.flat());
    expect(JSON.stringify(turns)).not.toMatch(/get_wether|warm/);
    // Backend: misspelled try, retry; invalid-arguments try, retry; answer.
    const backend = chats();
    expect(backend).toHaveLength(5);
    expect(nudgesIn(backend[1]).join("\n")).toMatch(/get_wether[\s\S]*get_weather/);
    expect(nudgesIn(backend[3]).join("\n")).toMatch(/convert_temperature[\s\S]*celsius/);
    for (const i of [2, 4]) expect(JSON.stringify(messagesOf(backend[i]))).not.toMatch(/get_wether|warm/);
    expect(messagesOf(backend[4]).filter(isToolResult).map(textOf)).toEqual([WEATHER_RESULT, CONVERSION_RESULT]);
  });

  it("a bare-JSON call to an unknown tool is never shown to the loop", async () => {
    const { model, chats } = await frontDoor(door, smallModel({ misspelling: "bare-json" }));
    const executor = weatherTools();
    const args = { model, tools: toolSet(executor), stopWhen: isStepCount(5), prompt: PROMPT, maxRetries: 0 };
    const steps = stream ? await streamText(args).steps : (await generateText(args)).steps;
    expect(JSON.stringify(steps.map(turnOf))).not.toContain("get_wether");
    expect(executor.executions).toEqual(EXPECTED_CALLS.flat());
    expect(nudgesIn(chats()[1]).join("\n")).toContain("get_wether");
  });

  it("ToolLoopAgent completes the same task", async () => {
    const { model } = await frontDoor(door, smallModel());
    const executor = weatherTools();
    const agent = new ToolLoopAgent({ model, tools: toolSet(executor), stopWhen: isStepCount(5), maxRetries: 0 });
    const result = stream ? await agent.stream({ prompt: PROMPT }) : await agent.generate({ prompt: PROMPT });
    expect(await result.text).toBe(FINAL_ANSWER);
    expect(executor.executions).toEqual(EXPECTED_CALLS.flat());
  });

  it("a Mistral [TOOL_CALLS] text call is rescued into a tool call", async () => {
    const { model, chats } = await frontDoor(door, (_n, req) =>
      messagesOf(req).some(isToolResult) ? { content: "It is 21 °C." } : { content: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]' },
    );
    const executor = weatherTools();
    const args = { model, tools: toolSet(executor), stopWhen: isStepCount(3), prompt: "Weather in Oslo?", maxRetries: 0 };
    const result = stream ? await streamText(args).steps : (await generateText(args)).steps;
    expect(result.map(turnOf).map((t) => t.calls)).toEqual([[{ name: "get_weather", args: { city: "Oslo" } }], []]);
    expect(executor.executions).toEqual([{ name: "get_weather", args: { city: "Oslo" } }]);
    expect(chats()).toHaveLength(2);
  });

  it("json output is read out of prose, checked against the schema and retried", async () => {
    const { model, chats } = await frontDoor(door, [{ content: 'Sure! {"city": "Oslo", "tempC": "cold"}' }, { content: 'Here:\n```json\n{"city": "Oslo", "tempC": 4}\n```' }]);
    const schema = z.object({ city: z.string(), tempC: z.number() });
    const args = { model, output: Output.object({ schema }), prompt: "Weather in Oslo as JSON", maxRetries: 0 };
    const output = stream ? await streamText(args).output : (await generateText(args)).output;
    expect(output).toEqual({ city: "Oslo", tempC: 4 });
    expect(chats()).toHaveLength(2);
    expect(nudgesIn(chats()[1]).join("\n")).toMatch(/tempC: must be number/);
  });
});

it("the Hermes call of a plain two-step loop: rescued once, the model answers after the tool result", async () => {
  const { model, chats } = await frontDoor("middleware", (_n, req) =>
    messagesOf(req).some(isToolResult) ? { content: "21 °C." } : { content: hermes("get_weather", { city: "Oslo" }) },
  );
  const executor = weatherTools();
  const result = await generateText({ model, tools: toolSet(executor), stopWhen: isStepCount(3), prompt: "Weather in Oslo?", maxRetries: 0 });
  expect(result.text).toBe("21 °C.");
  expect(result.steps[0]!.finishReason).toBe("tool-calls");
  expect(result.steps[0]!.providerMetadata?.forge).toEqual({ attempts: 1, rescued: true });
  expect(chats()).toHaveLength(2);
});
