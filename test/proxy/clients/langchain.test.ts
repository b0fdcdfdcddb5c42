/**
 * LangChain's `ChatOpenAI` (`@langchain/openai`) pointed at the proxy, tools bound with
 * `bindTools`, the loop run by hand: `invoke()` unstreamed, `stream()` chunks concatenated when
 * streamed; each tool is invoked with the model's ToolCall and answers with its ToolMessage.
 * The prose beside a call is the AIMessage's text next to its `tool_calls`.
 */
import type { AIMessage, AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop, type ClientTurn } from "./support/tool-loop-contract.js";
import { convertTemperatureParams, getWeatherParams, TOOL_DESCRIPTIONS, type WeatherTools } from "./support/weather-tools.js";

loopbackOnly();

function toolsFor(executor: WeatherTools): StructuredToolInterface[] {
  return [
    tool((args) => executor.run("get_weather", args), { name: "get_weather", description: TOOL_DESCRIPTIONS.get_weather, schema: getWeatherParams }),
    tool((args) => executor.run("convert_temperature", args), {
      name: "convert_temperature",
      description: TOOL_DESCRIPTIONS.convert_temperature,
      schema: convertTemperatureParams,
    }),
  ];
}

async function collect(chunks: AsyncIterable<AIMessageChunk>): Promise<AIMessageChunk> {
  let full: AIMessageChunk | undefined;
  for await (const chunk of chunks) full = full === undefined ? chunk : full.concat(chunk);
  if (full === undefined) throw new Error("the stream carried no chunk");
  return full;
}

/** Calls LangChain could not parse are listed too: the client would have seen them. */
function turnOf(message: AIMessage | AIMessageChunk): ClientTurn {
  const calls = [...(message.tool_calls ?? []), ...(message.invalid_tool_calls ?? [])].map((c) => ({ name: c.name ?? "", args: c.args }));
  return { text: message.text, calls };
}

describeToolLoop("LangChain ChatOpenAI", async ({ url, stream, tools: executor }) => {
  const tools = toolsFor(executor);
  const model = new ChatOpenAI({ model: "qwen3:8b", apiKey: "unused", maxRetries: 0, configuration: { baseURL: `${url}/v1` } }).bindTools(tools);
  const messages: BaseMessage[] = [new HumanMessage(PROMPT)];
  const turns: ClientTurn[] = [];
  for (let step = 0; step < 5; step++) {
    const reply = stream ? await collect(await model.stream(messages)) : await model.invoke(messages);
    turns.push(turnOf(reply));
    const calls = reply.tool_calls ?? [];
    if (calls.length === 0) break;
    messages.push(reply);
    for (const call of calls) {
      const run = tools.find((t) => t.name === call.name);
      if (run === undefined) throw new Error(`the model called an unknown tool "${call.name}"`);
      messages.push(await run.invoke({ ...call, type: "tool_call" }));
    }
  }
  return turns;
});
