/**
 * Every HTTP client inside the real WorkflowRunner, against a fake server of its backend that
 * plays a scripted model through a 3-step workflow (get_location → get_weather → answer).
 * The script reads the conversation the client sent, so the history each client builds
 * (native tool messages, or prompt-mode downgraded text) must carry the earlier results.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { ContextManager } from "../../src/context/index.js";
import type { LLMClient, StreamChunk } from "../../src/core/llm.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { WorkflowRunner } from "../../src/runner.js";
import { sendJson, sendNdjson, sendSse, startFakeServer, type FakeServer, type RecordedRequest } from "../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents, type ModelReply } from "../clients/support/wire.js";

const workflow = new Workflow({
  name: "weather",
  tools: {
    get_location: defineTool({ name: "get_location", description: "Where the user is", parameters: z.object({}), execute: () => "Paris" }),
    get_weather: defineTool({
      name: "get_weather",
      description: "Weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => `18C and sunny in ${city}`,
    }),
    answer: defineTool({ name: "answer", description: "Final answer", parameters: z.object({ text: z.string() }), execute: ({ text }) => ({ final: text }) }),
  },
  requiredSteps: ["get_location", "get_weather"],
  terminalTool: "answer",
  systemPromptTemplate: "You answer weather questions with tools.",
});

type Style = "ollama" | "openai-native" | "openai-prompt";

/** The scripted model: the next call follows from the tool results already in the conversation. */
function nextCall(body: RecordedRequest["body"], style: Style): { name: string; args: Record<string, unknown> } {
  const messages = body.messages as { role: string; content: string | null }[];
  const results = style === "openai-prompt"
    ? messages.filter((m) => m.role === "user").flatMap((m) => (m.content ?? "").match(/returned:\n[^\n]*/g) ?? []).map((s) => s.slice(10))
    : messages.filter((m) => m.role === "tool").map((m) => m.content ?? "");
  if (results.length === 0) return { name: "get_location", args: {} };
  if (results.length === 1) return { name: "get_weather", args: { city: results[0] } };
  return { name: "answer", args: { text: `Forecast: ${results[1]}` } };
}

function play(res: ServerResponse, req: RecordedRequest, style: Style): void {
  const call = nextCall(req.body, style);
  const reply: ModelReply =
    style === "openai-prompt"
      ? { content: "```json\n" + JSON.stringify({ tool: call.name, args: call.args }) + "\n```" }
      : { toolCalls: [call] };
  if (style === "ollama") return req.body.stream ? sendNdjson(res, ollamaStreamLines(reply)) : sendJson(res, 200, ollamaChat(reply));
  return req.body.stream ? sendSse(res, openaiSseEvents(reply)) : sendJson(res, 200, openaiCompletion(reply));
}

interface Case {
  name: string;
  /** Which script the server plays for a given request. */
  style(req: RecordedRequest): Style;
  /** llama-server without --jinja answers 500 to any request with tools. */
  rejectTools?: boolean;
  client(url: string): LLMClient;
}

const quiet = () => {};
const CASES: Case[] = [
  { name: "OllamaClient", style: () => "ollama", client: (url) => new OllamaClient({ model: "llama3.1:8b", baseUrl: url, logger: quiet }) },
  {
    name: "LlamafileClient native",
    style: () => "openai-native",
    client: (url) => new LlamafileClient({ ggufPath: "/m/Model.gguf", baseUrl: `${url}/v1`, mode: "native", logger: quiet }),
  },
  {
    name: "LlamafileClient prompt",
    style: () => "openai-prompt",
    client: (url) => new LlamafileClient({ ggufPath: "/m/Model.gguf", baseUrl: `${url}/v1`, mode: "prompt", logger: quiet }),
  },
  {
    name: "LlamafileClient auto (falls back to prompt)",
    style: () => "openai-prompt",
    rejectTools: true,
    client: (url) => new LlamafileClient({ ggufPath: "/m/Model.gguf", baseUrl: `${url}/v1`, mode: "auto", logger: quiet }),
  },
  {
    name: "OpenAICompatClient",
    style: () => "openai-native",
    client: (url) => new OpenAICompatClient({ model: "m", baseUrl: `${url}/v1`, apiKey: "k" }),
  },
];

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each(CASES)("$name inside WorkflowRunner", (c) => {
  it.each([false, true])("completes the 3-step workflow (stream: %s)", async (stream) => {
    server = await startFakeServer((req, res) => {
      if (c.rejectTools && req.body.tools) return sendJson(res, 500, { error: { code: 500, message: "tools param requires --jinja flag" } });
      play(res, req, c.style(req));
    });
    const chunks: StreamChunk[] = [];
    const runner = new WorkflowRunner({
      client: c.client(server.url),
      contextManager: new ContextManager({ budgetTokens: 32_000 }),
      maxIterations: 6,
      stream,
      onChunk: (chunk) => void chunks.push(chunk),
    });
    const result = await runner.run(workflow, "What's the weather where I am?");
    expect(result).toEqual({ final: "Forecast: 18C and sunny in Paris" });
    const chats = server.requests.filter((r) => !(c.rejectTools && r.body.tools));
    expect(chats).toHaveLength(3);
    expect(chats.every((r) => r.body.stream === stream)).toBe(true);
    if (stream) expect(chunks.filter((ch) => ch.type === "final")).toHaveLength(3);
    else expect(chunks).toHaveLength(0);
  });
});
