/**
 * AnthropicClient inside the real WorkflowRunner against a loopback server speaking the
 * Messages API (JSON and its SSE event sequence). The scripted model reads the tool_result
 * blocks the client built from the OpenAI-format history, so the conversion is exercised end
 * to end, including the synthetic result for a blocked premature call.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AnthropicClient } from "../../src/clients/anthropic.js";
import { ContextManager } from "../../src/context/index.js";
import { defineTool, Workflow } from "../../src/core/index.js";
import { WorkflowRunner } from "../../src/runner.js";
import { startFakeServer, type FakeServer, type RecordedRequest } from "../clients/support/fake-server.js";

const workflow = new Workflow({
  name: "weather",
  tools: {
    get_location: defineTool({ name: "get_location", description: "Where the user is", parameters: z.object({}), execute: () => "Paris" }),
    get_weather: defineTool({ name: "get_weather", description: "Weather", parameters: z.object({ city: z.string() }), execute: ({ city }) => `18C in ${city}` }),
    answer: defineTool({ name: "answer", description: "Final answer", parameters: z.object({ text: z.string() }), execute: ({ text }) => text }),
  },
  requiredSteps: ["get_location", "get_weather"],
  terminalTool: "answer",
  systemPromptTemplate: "Answer weather questions with tools.",
});

type Block = { type: string; content?: unknown; is_error?: boolean };

/** Successful tool results seen so far, read from Anthropic-format user turns. */
function results(body: RecordedRequest["body"]): string[] {
  const blocks = (body.messages as { role: string; content: string | Block[] }[])
    .filter((m) => m.role === "user" && Array.isArray(m.content))
    .flatMap((m) => m.content as Block[])
    .filter((b) => b.type === "tool_result" && !b.is_error);
  return blocks.map((b) => (typeof b.content === "string" ? b.content : JSON.stringify(b.content)));
}

function nextCall(body: RecordedRequest["body"], turn: number) {
  if (turn === 0) return { name: "answer", input: { text: "too early" } }; // premature: blocked by the loop
  const seen = results(body);
  if (seen.length === 0) return { name: "get_location", input: {} };
  if (seen.length === 1) return { name: "get_weather", input: { city: seen[0] } };
  return { name: "answer", input: { text: `Forecast: ${seen[1]}` } };
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function play(res: ServerResponse, req: RecordedRequest, turn: number): void {
  const call = nextCall(req.body, turn);
  const id = `toolu_${turn}`;
  const usage = { input_tokens: 30, output_tokens: 12 };
  if (!req.body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id: `msg_${turn}`, type: "message", role: "assistant", model: "claude-test", stop_reason: "tool_use", stop_sequence: null, usage,
      content: [{ type: "tool_use", id, name: call.name, input: call.input }],
    }));
    return;
  }
  const json = JSON.stringify(call.input);
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(sse("message_start", { type: "message_start", message: { id: `msg_${turn}`, type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 30, output_tokens: 1 } } }));
  res.write(sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id, name: call.name, input: {} } }));
  for (let i = 0; i < json.length; i += 5) {
    res.write(sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: json.slice(i, i + 5) } }));
  }
  res.write(sse("content_block_stop", { type: "content_block_stop", index: 0 }));
  res.write(sse("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 12 } }));
  res.end(sse("message_stop", { type: "message_stop" }));
}

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each([false, true])("AnthropicClient in WorkflowRunner (stream %s)", (stream) => {
  it("completes a 3-step workflow, with the premature call answered by a synthetic error result", async () => {
    server = await startFakeServer((req, res, n) => play(res, req, n));
    const client = new AnthropicClient({ model: "claude-test", apiKey: "k", baseURL: server.url, timeoutMs: 5_000 });
    const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 200_000 }), stream });
    await expect(runner.run(workflow, "Weather here?")).resolves.toBe("Forecast: 18C in Paris");
    expect(runner.lastRunStats).toMatchObject({ iterations: 4, stepNudges: 1 });
    const second = server.requests[1]!.body;
    expect(second.system).toContain("Answer weather questions");
    // the blocked call's answer travels as an is_error tool_result paired with its tool_use id
    const blocks = (second.messages as { role: string; content: Block[] | string }[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks.some((b) => b.type === "tool_use")).toBe(true);
    expect(blocks.find((b) => b.type === "tool_result")).toMatchObject({ is_error: true });
    expect(client.lastUsage).toEqual({ inputTokens: 30, outputTokens: 12 });
  });
});
