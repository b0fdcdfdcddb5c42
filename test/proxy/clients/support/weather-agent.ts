/**
 * The OpenAI Agents SDK's weather agent and how one of its model responses reads as a turn:
 * shared by the Chat Completions and the Responses tests of `@openai/agents`.
 */
import { Agent, tool, type ModelResponse } from "@openai/agents";
import type { ClientTurn } from "./tool-loop-contract.js";
import { convertTemperatureParams, getWeatherParams, TOOL_DESCRIPTIONS, type WeatherTools } from "./weather-tools.js";

/** @example const agent = agentFor(executor); */
export function agentFor(executor: WeatherTools) {
  return new Agent({
    name: "weather",
    instructions: "Answer with the tools.",
    model: "qwen3:8b",
    tools: [
      tool({ name: "get_weather", description: TOOL_DESCRIPTIONS.get_weather, parameters: getWeatherParams, execute: (args) => executor.run("get_weather", args) }),
      tool({
        name: "convert_temperature",
        description: TOOL_DESCRIPTIONS.convert_temperature,
        parameters: convertTemperatureParams,
        execute: (args) => executor.run("convert_temperature", args),
      }),
    ],
  });
}

/** Message text beside function_call items. @example turnOf(response).calls */
export function turnOf(response: ModelResponse): ClientTurn {
  const turn: ClientTurn = { text: "", calls: [] };
  for (const item of response.output) {
    if (item.type === "message" && item.role === "assistant") {
      for (const part of item.content) if (part.type === "output_text") turn.text += part.text;
    } else if (item.type === "function_call") {
      turn.calls.push({ name: item.name, args: JSON.parse(item.arguments) });
    }
  }
  return turn;
}
