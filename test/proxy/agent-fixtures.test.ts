/**
 * The first requests today's coding agents really send (test/fixtures/agents/, captured from the
 * pinned CLIs in .ci/agents against a loopback server) go through the proxy to a loopback
 * backend and back through the official SDK of their dialect, and nothing only the caller's
 * API understands reaches the backend. Claude Code with a local model name is the shape that
 * used to be a 400: a `system` message inside `messages`, `output_config`, adaptive
 * `thinking`, `context_management`, and a deferred `DeferredToolPlaceholder` beside its tools.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { parseMessagesRequest } from "../../src/proxy/anthropic-request.js";
import { parseChatCompletionRequest } from "../../src/proxy/openai-request.js";
import { requestToolDefs } from "../../src/proxy-request/request-tools.js";
import type { ModelReply } from "../clients/support/wire.js";
import { proxyRig, type Rig } from "./support/harness.js";

interface AgentFixture {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> & { messages: { role: string; content: unknown }[]; tools: Record<string, unknown>[] };
}
const agentFixture = (name: string): AgentFixture => JSON.parse(readFileSync(new URL(`../fixtures/agents/${name}.json`, import.meta.url), "utf8")) as AgentFixture;

/** Fields and markers that only mean something to Anthropic's API. */
const ANTHROPIC_ONLY = /cache_control|ephemeral|user_id|device_id|budget_tokens|signature|context_management|clear_thinking|output_config|adaptive|defer_loading|DeferredToolPlaceholder|tool_reference/;

const write = (name: string, args: Record<string, unknown>): ModelReply => ({ toolCalls: [{ name, args }] });

/** llama-server (native tools) behind the proxy. */
const llamaRig = (reply: ModelReply) =>
  proxyRig(() => reply, { wire: "openai", client: (url) => new LlamafileClient({ model: "qwen3-coder", baseUrl: `${url}/v1`, mode: "native", logger: () => {} }) });
const anthropic = (rig: Rig) => new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0, timeout: 20_000 });
const openai = (rig: Rig) => new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
const toolNames = (sent: { tools?: { function: { name: string } }[] }) => (sent.tools ?? []).map((t) => t.function.name);

describe("Claude Code 2.1.332 with ANTHROPIC_MODEL=qwen3:8b", () => {
  const fixture = agentFixture("claude-code");
  const body = () => structuredClone(fixture.body);
  const betas = fixture.headers["anthropic-beta"]!.split(",");
  const customTools = fixture.body.tools.filter((t) => t.defer_loading !== true).map((t) => t.name as string);

  it("parses: the system message folds into the system prompt after the system blocks, the placeholder is left out", () => {
    expect(fixture.body.messages.map((m) => m.role)).toEqual(["user", "system"]);
    const req = parseMessagesRequest(body());
    expect(req.messages.map((m) => m.role)).toEqual(["system", "user"]);
    const system = req.messages[0]!.content;
    expect(system.indexOf("You are a Claude agent")).toBeGreaterThan(-1);
    expect(system.indexOf("# Environment")).toBeGreaterThan(system.indexOf("You are a Claude agent"));
    expect(req.messages[1]!.content).toMatch(/create hello\.txt containing forge$/);
    expect(req.tools.map((t) => t.name)).toEqual(customTools);
    expect(req.tools.map((t) => t.name)).toContain("ToolSearch");
    expect(req.omittedTools).toEqual(["DeferredToolPlaceholder"]);
    // output_config.effort and thinking do not switch the backend's reasoning (docs/proxy.md).
    expect(req.body).toEqual({ max_tokens: 32000 });
    expect(JSON.stringify(req)).not.toMatch(/cache_control|device_id|defer_loading/);
    expect(Object.keys(requestToolDefs(req.tools))).toEqual(customTools);
  });

  it("beta.messages.stream with the captured betas: the Write call comes back, nothing Anthropic-only is forwarded", async () => {
    const rig = await llamaRig(write("Write", { file_path: "/repo/hello.txt", content: "forge" }));
    const stream = anthropic(rig).beta.messages.stream({ ...(body() as unknown as Anthropic.Beta.MessageCreateParamsStreaming), betas }, { headers: { "anthropic-version": fixture.headers["anthropic-version"]! } });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content.find((b) => b.type === "tool_use")).toMatchObject({ name: "Write", input: { file_path: "/repo/hello.txt", content: "forge" } });
    const [sent] = rig.chats();
    expect(JSON.stringify(sent!.body)).not.toMatch(ANTHROPIC_ONLY);
    expect(sent!.body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    expect(sent!.body.messages[0].content).toContain("# Environment");
    expect(toolNames(sent!.body)).toEqual(customTools);
    expect(sent!.body).toMatchObject({ model: "qwen3:8b", max_tokens: 32000 });
    expect(sent!.body.reasoning_effort).toBeUndefined(); // output_config.effort is not mapped
  });

  it("the fixture byte for byte (path ?beta=true, headers, body): 200 SSE, the omitted tool named in a header", async () => {
    const rig = await llamaRig({ content: "Created hello.txt." });
    const res = await fetch(`${rig.url}${fixture.path}`, {
      method: "POST",
      headers: { ...fixture.headers, "content-type": "application/json", "x-api-key": "unused" },
      body: JSON.stringify(fixture.body),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(res.headers.get("x-forge-omitted-tools")).toBe("DeferredToolPlaceholder");
    const events = [...(await res.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]).filter((e) => e !== "ping");
    expect(events[0]).toBe("message_start");
    expect(events.slice(-2)).toEqual(["message_delta", "message_stop"]);
  });

  it("count_tokens accepts the same body", async () => {
    const rig = await llamaRig({ content: "unused" });
    const { max_tokens: _drop, stream: _stream, ...rest } = body();
    const count = await anthropic(rig).messages.countTokens(rest as unknown as Anthropic.MessageCountTokensParams);
    expect(count.input_tokens).toBeGreaterThan(1000);
  });
});

describe("Claude Code after a ToolSearch: a deferred tool loads once a tool_reference names it", () => {
  const fixture = agentFixture("claude-code-tool-search");

  it("WebFetch (referenced) reaches the backend as an ordinary tool, the placeholder never does", async () => {
    const deferred = fixture.body.tools.filter((t) => t.defer_loading === true).map((t) => t.name);
    expect(deferred).toEqual(["WebFetch", "DeferredToolPlaceholder"]);
    const rig = await llamaRig({ content: "hello.txt now contains forge." });
    const res = await anthropic(rig).messages.create({ ...(structuredClone(fixture.body) as unknown as Anthropic.MessageCreateParamsNonStreaming), stream: false });
    expect(res.content).toEqual([expect.objectContaining({ type: "text", text: "hello.txt now contains forge." })]);
    const sent = rig.chats()[0]!.body;
    expect(toolNames(sent)).toContain("WebFetch");
    expect(toolNames(sent)).not.toContain("DeferredToolPlaceholder");
    expect(JSON.stringify(sent)).not.toMatch(ANTHROPIC_ONLY);
    const results = sent.messages.filter((m: { role: string }) => m.role === "tool").map((m: { content: string }) => m.content);
    expect(results[0]).toBe("[tool loaded: WebFetch]");
    expect(results[1]).toMatch(/^File created successfully/);
  });
});

describe.each([
  ["opencode 1.18.33", "opencode", write("write", { filePath: "/repo/hello.txt", content: "forge" })],
  ["Qwen Code 0.24.4", "qwen-code", write("write_file", { file_path: "/repo/hello.txt", content: "forge" })],
  ["pi 0.73.1", "pi", write("write", { path: "hello.txt", content: "forge" })],
])("%s (Chat Completions)", (_agent, name, reply) => {
  const fixture = agentFixture(name);
  const params = () => structuredClone(fixture.body) as unknown as OpenAI.ChatCompletionCreateParamsStreaming;

  it("parses, every tool schema compiles", () => {
    const req = parseChatCompletionRequest(structuredClone(fixture.body));
    expect(req.tools.map((t) => t.name)).toEqual(fixture.body.tools.map((t) => (t.function as { name: string }).name));
    expect(Object.keys(requestToolDefs(req.tools))).toHaveLength(req.tools.length);
    expect(req.omittedTools).toBeUndefined();
  });

  it("chat.completions.stream: the write call comes back; messages, tools and the agent's own fields reach the backend", async () => {
    const rig = await llamaRig(reply);
    const completion = await openai(rig).chat.completions.stream(params()).finalChatCompletion();
    const call = completion.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe(reply.toolCalls![0]!.name);
    expect(JSON.parse(call.function.arguments)).toEqual(reply.toolCalls![0]!.args);
    const sent = rig.chats()[0]!.body;
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(fixture.body.messages.map((m) => m.role));
    expect(sent.messages[0].content).toBe(fixture.body.messages[0]!.content);
    expect(toolNames(sent)).toEqual(fixture.body.tools.map((t) => (t.function as { name: string }).name));
    const own = Object.fromEntries(Object.entries(fixture.body).filter(([k]) => !["model", "messages", "tools", "tool_choice", "stream", "stream_options"].includes(k)));
    expect(sent).toMatchObject(own);
  });
});
