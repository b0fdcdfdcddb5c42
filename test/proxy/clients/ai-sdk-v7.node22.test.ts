/**
 * AI SDK 7 (`ai` 7 with `@ai-sdk/openai-compatible` 3 and `@ai-sdk/anthropic` 4) running its
 * own multi-step tool loop through the proxy, in the shared client contract: `generateText` and
 * `streamText` with `stopWhen: isStepCount(...)`, over /v1/chat/completions and /v1/messages.
 * Needs Node >= 22 (vitest.config.ts leaves it out on older Node, with a note).
 */
import { createAnthropic } from "@ai-sdk/anthropic-v4";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible-v3";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { generateText, isStepCount, streamText, tool, type StepResult, type ToolSet } from "ai-v7";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop, type ClientTurn, type DriveOptions } from "./support/tool-loop-contract.js";
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

async function drive(model: LanguageModelV4, { stream, tools: executor }: DriveOptions): Promise<ClientTurn[]> {
  // maxOutputTokens: the Anthropic provider warns on every call for a model name it does not know.
  const args = { model, tools: toolSet(executor), stopWhen: isStepCount(5), prompt: PROMPT, maxRetries: 0, maxOutputTokens: 512 };
  const steps = stream ? await streamText(args).steps : (await generateText(args)).steps;
  return steps.map(turnOf);
}

describeToolLoop("AI SDK 7 (openai-compatible 3)", (o) => drive(createOpenAICompatible({ name: "forge", baseURL: `${o.url}/v1` }).chatModel("qwen3:8b"), o));

describeToolLoop("AI SDK 7 (anthropic 4, /v1/messages)", (o) => drive(createAnthropic({ baseURL: `${o.url}/v1`, apiKey: "unused" })("qwen3:8b"), o));
