/**
 * The scripted model the agent tests stand on, checked without any agent: its answers are read
 * correctly by the real SDKs of each API it serves, it finds each agent's file-writing tool in
 * the agent's real first request (test/fixtures/agents), its turn policy reaches the correct call
 * and then the final answer from every case, and each docs page yields a runnable setup.
 */
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import type { LLMResponse } from "../../src/core/llm.js";
import { AGENTS, agentSetup, DOC_PROXY_URL, type AgentName } from "./support/agent-setup.js";
import { MODEL, startFakeOllama, type FakeOllama } from "./support/fake-ollama.js";
import { viewRequest, type Dialect, type Turn } from "./support/request-view.js";
import { answer, CASES, FILE_JSON, FINAL_TEXT, findWriteTool, TEXT_CASES } from "./support/turn-policy.js";

const WORKDIR = "/tmp/case";
const WRITE_SCHEMA = { type: "object" as const, properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] };
const WRITE_TOOL = { name: "write", description: "Write a file", parameters: WRITE_SCHEMA, schema: WRITE_SCHEMA };
const CORRECT_ARGS = { path: `${WORKDIR}/hello.txt`, content: "forge" };

const open: FakeOllama[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});
async function model(): Promise<FakeOllama> {
  const m = await startFakeOllama("native", WORKDIR);
  open.push(m);
  return m;
}

describe("the scripted model's wire formats, read by the real SDKs", () => {
  it("Chat Completions, streamed: the openai SDK assembles the native call", async () => {
    const m = await model();
    const openai = new OpenAI({ baseURL: `${m.url}/v1`, apiKey: "unused" });
    const stream = openai.chat.completions.stream({
      model: MODEL,
      messages: [{ role: "user", content: "create hello.txt" }],
      tools: [{ type: "function", function: { name: WRITE_TOOL.name, parameters: WRITE_TOOL.schema } }],
    });
    const call = (await stream.finalChatCompletion()).choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && [call.function.name, JSON.parse(call.function.arguments)]).toEqual(["write", CORRECT_ARGS]);
  });

  it("Responses, streamed and not: the openai SDK reads the function_call item", async () => {
    const m = await model();
    const openai = new OpenAI({ baseURL: `${m.url}/v1`, apiKey: "unused" });
    const request = { model: MODEL, input: "create hello.txt", tools: [{ type: "function" as const, name: "write", parameters: WRITE_TOOL.schema, strict: false }] };
    const streamed = await openai.responses.stream(request).finalResponse();
    const whole = await openai.responses.create(request);
    for (const r of [streamed, whole]) {
      const call = r.output.find((i) => i.type === "function_call");
      expect(call?.type === "function_call" && [call.name, JSON.parse(call.arguments)]).toEqual(["write", CORRECT_ARGS]);
    }
  });

  it("Anthropic Messages, streamed and not: the Anthropic SDK reads the tool_use block", async () => {
    const m = await model();
    const anthropic = new Anthropic({ baseURL: m.url, apiKey: "unused" });
    const request = { model: MODEL, max_tokens: 100, messages: [{ role: "user" as const, content: "create hello.txt" }], tools: [{ name: "write", input_schema: WRITE_TOOL.schema as Anthropic.Tool.InputSchema }] };
    const streamed = await anthropic.messages.stream(request).finalMessage();
    const whole = await anthropic.messages.create(request);
    for (const r of [streamed, whole]) {
      const block = r.content.find((b) => b.type === "tool_use");
      expect(block?.type === "tool_use" && [block.name, block.input]).toEqual(["write", CORRECT_ARGS]);
    }
  });

  it("Ollama /api/chat, streamed and not: forge's OllamaClient reads the native call", async () => {
    const m = await model();
    const client = new OllamaClient({ model: MODEL, baseUrl: m.url, think: false });
    const messages = [{ role: "user" as const, content: "create hello.txt" }];
    const whole = await client.send(messages, [WRITE_TOOL]);
    let streamed: LLMResponse | undefined;
    for await (const chunk of client.sendStream(messages, [WRITE_TOOL])) if (chunk.type === "final") streamed = chunk.response;
    for (const r of [whole, streamed]) expect(r?.type === "tool_calls" && r.toolCalls.map((c) => [c.tool, c.args])).toEqual([["write", CORRECT_ARGS]]);
  });
});

const FIXTURE_WRITE_TOOLS: Record<AgentName, string> = { "claude-code": "Write", codex: "exec_command", opencode: "write", "qwen-code": "write_file", pi: "write" };
const dialectOf = (path: string): Dialect => (path.startsWith("/v1/messages") ? "anthropic" : path.startsWith("/v1/responses") ? "responses" : "openai");

describe("each agent's real first request", () => {
  it.each(AGENTS)("%s: the scripted model finds its file-writing tool", (agent) => {
    const fixture = JSON.parse(readFileSync(`test/fixtures/agents/${agent}.json`, "utf8")) as { path: string; body: Record<string, unknown> };
    const view = viewRequest(dialectOf(fixture.path), fixture.body);
    expect(findWriteTool(view.tools, WORKDIR)?.name).toBe(FIXTURE_WRITE_TOOLS[agent]);
    expect(view.turns.some((t) => t.role === "user")).toBe(true);
  });
});

describe("the turn policy", () => {
  const tools = [{ name: WRITE_TOOL.name, schema: WRITE_TOOL.schema }];
  const user: Turn = { role: "user", text: "Create hello.txt containing forge", calls: [] };

  it("from any case, an agent that runs native calls and reports failures reaches the file and the final answer", () => {
    fc.assert(
      fc.property(fc.constantFrom(...CASES), fc.boolean(), (kase, flagged) => {
        const turns: Turn[] = [user];
        let wrote = false;
        for (let step = 0; step < 4; step++) {
          const reply = answer(kase, { tools, turns }, WORKDIR);
          if (!reply.toolCalls) return TEXT_CASES.includes(kase) ? !wrote && reply.content !== FINAL_TEXT : wrote && reply.content === FINAL_TEXT;
          const call = reply.toolCalls[0]!;
          turns.push({ role: "assistant", text: "", calls: [{ name: call.name, args: call.args }] });
          const ok = call.name === "write" && JSON.stringify(call.args) === JSON.stringify(CORRECT_ARGS);
          wrote ||= ok;
          turns.push(ok ? { role: "tool", text: "Wrote file successfully.", calls: [] } : { role: "tool", text: flagged ? "no such tool" : "Error: invalid arguments", calls: [], ...(flagged ? { isError: true } : {}) });
        }
        return false;
      }),
    );
  });

  it("after the proxy's user-channel nudge, the correct native call", () => {
    const turns: Turn[] = [user, { role: "assistant", text: "I will.", calls: [] }, { role: "user", text: "Your last reply was plain text, not a tool call. In this conversation you act only through tools.", calls: [] }];
    expect(answer("hermes", { tools, turns }, WORKDIR)).toEqual({ toolCalls: [{ name: "write", args: CORRECT_ARGS }] });
  });

  it("requests without a file-writing tool (titles, side questions) get a sentence", () => {
    expect(answer("native", { tools: [], turns: [user] }, WORKDIR).toolCalls).toBeUndefined();
  });

  it("requests without a file-writing tool that ask for JSON (Ollama `format`) get the file as JSON", () => {
    const view = viewRequest("ollama", { messages: [{ role: "user", content: "Which file?" }], format: { type: "object" } });
    expect(JSON.parse(answer("native", view, WORKDIR).content!)).toEqual(FILE_JSON);
    // The compat APIs' views carry no format: the agents' requests are answered as before.
    expect(viewRequest("openai", { messages: [], response_format: { type: "json_object" } }).format).toBeUndefined();
  });
});

describe("the docs pages", () => {
  it.each(AGENTS)("docs/agents/%s.md: a run line, and the proxy's address replaced everywhere", (agent) => {
    const setup = agentSetup(agent, "http://127.0.0.1:1");
    expect(setup.run).toMatch(/^(claude|codex|opencode|qwen|pi) .*hello\.txt/);
    expect(JSON.stringify(setup)).not.toContain(DOC_PROXY_URL);
    expect(JSON.stringify(setup)).toContain("http://127.0.0.1:1");
  });
});
