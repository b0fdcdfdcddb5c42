/**
 * The official `openai` SDK's chat completions driving a tool loop by hand through the proxy:
 * `create()` unstreamed, `stream().finalChatCompletion()` streamed; the prose beside a call is
 * `message.content` next to `message.tool_calls`.
 */
import OpenAI from "openai";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop, type ClientTurn } from "./support/tool-loop-contract.js";
import { TOOL_DESCRIPTIONS, TOOL_SCHEMAS, type ToolName } from "./support/weather-tools.js";

loopbackOnly();

const tools: OpenAI.ChatCompletionFunctionTool[] = (Object.keys(TOOL_SCHEMAS) as ToolName[]).map((name) => ({
  type: "function",
  function: { name, description: TOOL_DESCRIPTIONS[name], parameters: TOOL_SCHEMAS[name] },
}));

describeToolLoop("openai SDK", async ({ url, stream, tools: executor }) => {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: PROMPT }];
  const turns: ClientTurn[] = [];
  for (let step = 0; step < 5; step++) {
    const params = { model: "qwen3:8b", messages, tools };
    const completion = stream ? await client.chat.completions.stream(params).finalChatCompletion() : await client.chat.completions.create(params);
    const message = completion.choices[0]!.message;
    const calls = (message.tool_calls ?? []).filter((c) => c.type === "function");
    turns.push({ text: message.content ?? "", calls: calls.map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) })) });
    if (calls.length === 0) break;
    messages.push({ role: "assistant", content: message.content, tool_calls: calls });
    for (const call of calls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: executor.run(call.function.name, JSON.parse(call.function.arguments)) });
    }
  }
  return turns;
});
