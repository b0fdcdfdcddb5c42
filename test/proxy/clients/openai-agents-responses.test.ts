/**
 * The OpenAI Agents SDK (`@openai/agents`) on its default model — the Responses API
 * (`OpenAIProvider` without `useResponses: false`) — through the proxy's POST /v1/responses:
 * the same `Agent` and tools as openai-agents.test.ts (which drives Chat Completions), the same
 * tool-loop contract, `run()` unstreamed and streamed. Tracing off so nothing leaves loopback.
 */
import { OpenAIProvider, Runner, setTracingDisabled, type ModelResponse } from "@openai/agents";
import OpenAI from "openai";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop } from "./support/tool-loop-contract.js";
import { agentFor, turnOf } from "./support/weather-agent.js";

loopbackOnly();
setTracingDisabled(true);

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
