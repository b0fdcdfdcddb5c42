/**
 * `@anthropic-ai/sdk` driving a tool loop by hand through the proxy's /v1/messages:
 * `create()` unstreamed, `stream().finalMessage()` streamed; the prose beside a call is a text
 * block before the `tool_use` block, and only text before the first `tool_use` counts as such.
 */
import Anthropic from "@anthropic-ai/sdk";
import { loopbackOnly } from "./support/loopback-only.js";
import { PROMPT } from "./support/small-model.js";
import { describeToolLoop, type ClientTurn } from "./support/tool-loop-contract.js";
import { TOOL_DESCRIPTIONS, TOOL_SCHEMAS, type ToolName } from "./support/weather-tools.js";

loopbackOnly();

const tools: Anthropic.Tool[] = (Object.keys(TOOL_SCHEMAS) as ToolName[]).map((name) => ({
  name,
  description: TOOL_DESCRIPTIONS[name],
  input_schema: TOOL_SCHEMAS[name] as Anthropic.Tool.InputSchema,
}));

/** Text blocks before the first tool_use, then the tool_use blocks. */
function turnOf(content: Anthropic.ContentBlock[]): ClientTurn {
  const firstUse = content.findIndex((b) => b.type === "tool_use");
  const before = firstUse === -1 ? content : content.slice(0, firstUse);
  const text = before.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  const calls = content.flatMap((b) => (b.type === "tool_use" ? [{ name: b.name, args: b.input }] : []));
  return { text, calls };
}

describeToolLoop("@anthropic-ai/sdk", async ({ url, stream, tools: executor }) => {
  const client = new Anthropic({ baseURL: url, apiKey: "unused", maxRetries: 0 });
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: PROMPT }];
  const turns: ClientTurn[] = [];
  for (let step = 0; step < 5; step++) {
    const params = { model: "qwen3:8b", max_tokens: 512, messages, tools };
    const reply = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    turns.push(turnOf(reply.content));
    const uses = reply.content.filter((b) => b.type === "tool_use");
    if (reply.stop_reason !== "tool_use" || uses.length === 0) break;
    messages.push({ role: "assistant", content: reply.content });
    messages.push({
      role: "user",
      content: uses.map((u) => ({ type: "tool_result" as const, tool_use_id: u.id, content: executor.run(u.name, u.input) })),
    });
  }
  return turns;
});
