/**
 * The OpenAI Agents SDK (`@openai/agents`) running an `Agent` with two `tool()`s through the
 * proxy on its Chat Completions model (`OpenAIProvider({ useResponses: false })` with an
 * `openai` client pointed at the proxy), tracing off so nothing leaves loopback; `run()`
 * unstreamed and streamed (events consumed, then `completed`). A turn is one model response:
 * its message items' text beside its function_call items.
 */
import { OpenAIProvider, Runner, setTracingDisabled, type ModelResponse } from "@openai/agents";
import OpenAI from "openai";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop } from "./support/tool-loop-contract.js";
import { agentFor, turnOf } from "./support/weather-agent.js";

loopbackOnly();
setTracingDisabled(true);

describeToolLoop("OpenAI Agents SDK", async ({ url, stream, tools: executor }) => {
  const openAIClient = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses: false }), tracingDisabled: true });
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
  return responses.map(turnOf);
});
