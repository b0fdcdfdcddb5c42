/**
 * The OpenAI Agents SDK (`@openai/agents`) on its default model — the Responses API
 * (`OpenAIProvider` without `useResponses: false`) — through the proxy's POST /v1/responses:
 * the same `Agent` and tools as openai-agents.test.ts (which drives Chat Completions), the same
 * tool-loop contract, `run()` unstreamed and streamed. Tracing off so nothing leaves loopback.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool, type ModelResponse } from "@openai/agents";
import OpenAI from "openai";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop, type ClientTurn } from "./support/tool-loop-contract.js";
import { convertTemperatureParams, getWeatherParams, TOOL_DESCRIPTIONS, type WeatherTools } from "./support/weather-tools.js";

loopbackOnly();
setTracingDisabled(true);

function agentFor(executor: WeatherTools) {
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

function turnOf(response: ModelResponse): ClientTurn {
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

describeToolLoop("OpenAI Agents SDK (Responses API)", async ({ url, stream, tools: executor }) => {
  // Every model request must be a Responses one (the SDK's default), not a chat completion.
  const paths: string[] = [];
  const recording: typeof fetch = (input, init) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };
  const openAIClient = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0, fetch: recording });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient }), tracingDisabled: true });
  const agent = agentFor(executor);
  let responses: ModelResponse[];
  if (stream) {
    const result = await runner.run(agent, PROMPT, { stream: true, maxTurns: 5 });
    for await (const _event of result) {
      // Consumed like a UI would; the turns are read from the finished result.
    }
    await result.completed;
    responses = result.rawResponses;
  } else {
    responses = (await runner.run(agent, PROMPT, { maxTurns: 5 })).rawResponses;
  }
  if (paths.length === 0 || paths.some((p) => p !== "/v1/responses")) throw new Error(`expected only POST /v1/responses, saw ${paths.join(", ")}`);
  return responses.map(turnOf);
});
