/**
 * The Vercel AI SDK (`ai` 6 + `@ai-sdk/openai-compatible`) running its own multi-step tool loop
 * through the proxy: `generateText` and `streamText` with `stopWhen: stepCountIs(...)`. Each
 * step's content is what the SDK exposes: text parts beside tool-call parts (including any
 * invalid call the SDK would have turned into a tool error).
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool, type StepResult, type ToolSet } from "ai";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop, type ClientTurn } from "./support/tool-loop-contract.js";
import { convertTemperatureParams, getWeatherParams, TOOL_DESCRIPTIONS, type WeatherTools } from "./support/weather-tools.js";

loopbackOnly();

function toolSet(executor: WeatherTools) {
  return {
    get_weather: tool({ description: TOOL_DESCRIPTIONS.get_weather, inputSchema: getWeatherParams, execute: async (args) => executor.run("get_weather", args) }),
    convert_temperature: tool({
      description: TOOL_DESCRIPTIONS.convert_temperature,
      inputSchema: convertTemperatureParams,
      execute: async (args) => executor.run("convert_temperature", args),
    }),
  };
}

function turnOf<TTools extends ToolSet>(step: StepResult<TTools>): ClientTurn {
  const text = step.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  const calls = step.content.flatMap((p) => (p.type === "tool-call" ? [{ name: p.toolName, args: p.input }] : []));
  return { text, calls };
}

describeToolLoop("AI SDK", async ({ url, stream, tools: executor }) => {
  const model = createOpenAICompatible({ name: "forge", baseURL: `${url}/v1` }).chatModel("qwen3:8b");
  const args = { model, tools: toolSet(executor), stopWhen: stepCountIs(5), prompt: PROMPT, maxRetries: 0 };
  const steps = stream ? await streamText(args).steps : (await generateText(args)).steps;
  return steps.map(turnOf);
});
