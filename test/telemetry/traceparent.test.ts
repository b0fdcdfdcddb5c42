/**
 * The chat span's context reaches the backend as a W3C `traceparent` header (loopback HTTP
 * servers speaking Ollama's and OpenAI's wire formats), passed explicitly through the send
 * options: no context manager is registered here.
 */
import { SpanKind } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { ContextManager } from "../../src/context/context-manager.js";
import type { LLMClient } from "../../src/core/llm.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { WorkflowRunner } from "../../src/runner.js";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { ollamaChat, openaiCompletion } from "../clients/support/wire.js";
import { installTracing, resetTracing } from "../support/otel.js";

afterEach(() => resetTracing());
const serve = useFakeServers();
const answer = defineTool({ name: "answer", description: "Answer", parameters: z.object({ text: z.string() }), execute: async ({ text }) => text });
const workflow = new Workflow({ name: "hello", tools: { answer }, terminalTool: "answer", systemPromptTemplate: "Answer." });
const reply = { toolCalls: [{ name: "answer", args: { text: "hi" }, id: "call_1" }], usage: { input: 12, output: 3 } };

async function traced(client: LLMClient) {
  const t = installTracing();
  const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
  expect(await runner.run(workflow, "hello")).toBe("hi");
  return t;
}

describe("traceparent to the backend", () => {
  it("Ollama /api/chat gets the chat span's traceparent", async () => {
    const s = await serve((_req, res) => sendJson(res, 200, ollamaChat(reply, "qwen3:8b")));
    const t = await traced(new OllamaClient({ model: "qwen3:8b", baseUrl: s.url, think: false, logger: () => {} }));
    const chat = t.one("chat qwen3:8b");
    expect(chat.kind).toBe(SpanKind.CLIENT);
    expect(chat.attributes).toMatchObject({ "gen_ai.provider.name": "ollama", "gen_ai.request.model": "qwen3:8b", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 3 });
    const { traceId, spanId } = chat.spanContext();
    expect(s.requests[0]!.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it("an OpenAI-compatible server gets it too, and no traceparent goes out when tracing is off", async () => {
    const s = await serve((_req, res) => sendJson(res, 200, openaiCompletion(reply, "m")));
    const t = await traced(new OpenAICompatClient({ model: "m", baseUrl: s.url }));
    const chat = t.one("chat m");
    expect(chat.attributes["gen_ai.provider.name"]).toBe("openai");
    expect(s.requests[0]!.headers.traceparent).toBe(`00-${chat.spanContext().traceId}-${chat.spanContext().spanId}-01`);
    resetTracing();
    const runner = new WorkflowRunner({ client: new OpenAICompatClient({ model: "m", baseUrl: s.url }), contextManager: new ContextManager({ budgetTokens: 8192 }) });
    await runner.run(workflow, "hello");
    expect(s.requests[1]!.headers.traceparent).toBeUndefined();
  });
});
