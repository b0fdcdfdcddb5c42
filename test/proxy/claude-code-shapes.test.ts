/**
 * The request shapes Claude Code sends to /v1/messages (test/fixtures/claude-code-request.json:
 * system blocks and tools with `cache_control`, `thinking`, `metadata`, `context_management`,
 * signed thinking blocks in history, error tool results as text-block arrays, `anthropic-beta`
 * headers, `?beta=true`) are accepted, and nothing Anthropic-only reaches the backend. Today's
 * Claude Code (test/fixtures/agents/) is covered by agent-fixtures.test.ts.
 */
import Anthropic from "@anthropic-ai/sdk";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { parseMessagesRequest } from "../../src/proxy/anthropic-request.js";
import { mediaPlaceholder } from "../../src/proxy/content-parts.js";
import { requestToolDefs } from "../../src/proxy-request/request-tools.js";
import type { RecordedRequest } from "../clients/support/fake-server.js";
import type { ModelReply } from "../clients/support/wire.js";
import { proxyRig, type Rig } from "./support/harness.js";

interface Fixture {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> & { messages: Anthropic.MessageParam[]; stream: boolean };
}
const fixture = JSON.parse(readFileSync(new URL("../fixtures/claude-code-request.json", import.meta.url), "utf8")) as Fixture;
const body = () => structuredClone(fixture.body);
const betas = fixture.headers["anthropic-beta"]!.split(",");

/** Fields and markers that only mean something to Anthropic's API. */
const ANTHROPIC_ONLY = /cache_control|ephemeral|user_id|metadata|budget_tokens|signature|redacted_thinking|context_management|clear_thinking|is_error/;

const bash: ModelReply = { toolCalls: [{ name: "Bash", args: { command: "ls src/../test", description: "List test files" } }] };

/** llama-server (native tools) behind the proxy, answering every request with `reply`. */
const llamaRig = (reply: ModelReply | ((n: number, req: RecordedRequest) => ModelReply)) =>
  proxyRig(typeof reply === "function" ? reply : () => reply, {
    wire: "openai",
    client: (url) => new LlamafileClient({ model: "qwen3-coder", baseUrl: `${url}/v1`, mode: "native", logger: () => {} }),
  });
// An explicit timeout: the SDK refuses an unstreamed create with max_tokens 32000 without one.
const sdk = (rig: Rig) => new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0, timeout: 20_000 });

describe("Claude Code request shapes: parsing", () => {
  it("accepts the fixture; thinking blocks, signatures and cache_control stay behind", () => {
    const req = parseMessagesRequest(body());
    expect(req.messages.map((m) => [m.role, m.meta.type, m.content])).toEqual([
      ["system", "system_prompt", expect.stringMatching(/^You are Claude Code, Anthropic's official CLI for Claude\.\nYou are an interactive CLI tool/)],
      ["user", "user_input", expect.stringMatching(/<\/system-reminder>\nList the files in src, then read src\/missing\.ts\.$/)],
      ["assistant", "tool_call", "I'll list the files first."],
      ["tool", "tool_result", "index.ts\nutil.ts"],
      ["assistant", "tool_call", ""],
      ["tool", "tool_result", "<tool_use_error>File does not exist.</tool_use_error>"],
      ["user", "user_input", expect.stringContaining("TodoWrite")],
    ]);
    expect(req.messages[4]!.toolCalls).toEqual([{ name: "Read", args: { file_path: "/repo/src/missing.ts" }, callId: "toolu_01Q7sTgRmCm4jFbKx9PwLe2N" }]);
    expect(req.messages[5]).toMatchObject({ toolName: "Read", toolCallId: "toolu_01Q7sTgRmCm4jFbKx9PwLe2N" });
    // Only sampling travels on; thinking, metadata and context_management are accepted and dropped.
    expect(req.body).toEqual({ max_tokens: 32000, temperature: 1 });
    expect(req).toMatchObject({ stream: true, toolChoice: undefined });
    expect(req.tools.map((t) => t.name)).toEqual(["Bash", "Read", "TodoWrite"]);
    expect(JSON.stringify(req)).not.toMatch(ANTHROPIC_ONLY);
    // draft-07 `$schema` declarations compile.
    expect(Object.keys(requestToolDefs(req.tools))).toEqual(["Bash", "Read", "TodoWrite"]);
  });

  it.each([
    [{ type: "auto", disable_parallel_tool_use: true }, "auto"],
    [{ type: "any" }, "required"],
    [{ type: "tool", name: "Bash", disable_parallel_tool_use: false }, { type: "function", function: { name: "Bash" } }],
    [{ type: "none" }, "none"],
  ])("tool_choice %j → %j", (choice, expected) => {
    expect(parseMessagesRequest({ ...body(), tool_choice: choice }).toolChoice).toEqual(expected);
  });

  it.each([{ type: "disabled" }, { type: "adaptive" }, { type: "enabled", budget_tokens: 1024 }])("thinking %j is accepted and not forwarded", (thinking) => {
    expect(parseMessagesRequest({ ...body(), thinking }).body).toEqual({ max_tokens: 32000, temperature: 1 });
  });

  it.each([
    ["an image in a user turn", { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }, { type: "text", text: "What is this?" }] }, ["user", `${mediaPlaceholder("image")}\nWhat is this?`]],
    ["a PDF in a user turn", { role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }] }, ["user", mediaPlaceholder("document")]],
    ["a plain-text document", { role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "the notes" } }] }, ["user", "the notes"]],
    [
      "an image inside a tool result (Read on a PNG)",
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] },
      ["tool", mediaPlaceholder("image")],
    ],
    ["a server tool result (left out)", { role: "user", content: [{ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }, { type: "text", text: "go on" }] }, ["user", "go on"]],
  ])("%s is accepted: the backend gets text", (_name, turn, [role, content]) => {
    const req = parseMessagesRequest({ ...body(), messages: [...body().messages, turn] });
    expect(req.messages.slice(-1).map((m) => [m.role, m.content])).toEqual([[role, content]]);
  });
});

describe("Claude Code request shapes: through the proxy", () => {
  it("messages.create with the fixture's headers: a tool call back, nothing Anthropic-only forwarded", async () => {
    const rig = await llamaRig(bash);
    const message = await sdk(rig).messages.create({ ...(body() as unknown as Anthropic.MessageCreateParamsNonStreaming), stream: false }, { headers: fixture.headers });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.find((b) => b.type === "tool_use")).toMatchObject({ name: "Bash", input: { command: "ls src/../test" } });
    const [sent] = rig.chats();
    expect(JSON.stringify(sent!.body)).not.toMatch(ANTHROPIC_ONLY);
    expect(sent!.body).toMatchObject({ max_tokens: 32000, temperature: 1, model: "claude-sonnet-4-6" });
    expect(sent!.body.messages[0].content).toMatch(/^You are Claude Code/);
    expect(sent!.body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool", "user"]);
    expect(sent!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["Bash", "Read", "TodoWrite"]);
  });

  it("beta.messages.stream (?beta=true, anthropic-beta) streams the answer", async () => {
    const rig = await llamaRig({ content: "Nothing to read: src/missing.ts does not exist.", reasoning: "The file is missing." });
    const stream = sdk(rig).beta.messages.stream({ ...(body() as unknown as Anthropic.Beta.MessageCreateParamsStreaming), betas });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("end_turn");
    expect(final.content.filter((b) => b.type === "text").map((b) => (b as Anthropic.Beta.BetaTextBlock).text).join("")).toBe("Nothing to read: src/missing.ts does not exist.");
  });

  it("the fixture byte for byte (path, headers, body) gets a well-formed SSE stream", async () => {
    const rig = await llamaRig(bash);
    const res = await fetch(`${rig.url}${fixture.path}`, {
      method: "POST",
      headers: { ...fixture.headers, "content-type": "application/json", "x-api-key": "unused" },
      body: JSON.stringify(fixture.body),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const events = [...(await res.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]).filter((e) => e !== "ping");
    expect(events[0]).toBe("message_start");
    expect(events).toContain("content_block_start");
    expect(events.slice(-2)).toEqual(["message_delta", "message_stop"]);
  });

  it.each([
    [{ type: "auto", disable_parallel_tool_use: true }, "auto"],
    [{ type: "any" }, "required"],
    [{ type: "tool", name: "Bash" }, { type: "function", function: { name: "Bash" } }],
  ])("tool_choice %j reaches llama-server as %j", async (choice, expected) => {
    const rig = await llamaRig(bash);
    const message = await sdk(rig).messages.create({ ...(body() as unknown as Anthropic.MessageCreateParamsNonStreaming), stream: false, tool_choice: choice as Anthropic.ToolChoice });
    expect(message.stop_reason).toBe("tool_use");
    expect(rig.chats()[0]!.body.tool_choice).toEqual(expected);
  });

  it('tool_choice "none" sends no tools and answers text', async () => {
    const rig = await llamaRig({ content: "Done." });
    const message = await sdk(rig).messages.create({ ...(body() as unknown as Anthropic.MessageCreateParamsNonStreaming), stream: false, tool_choice: { type: "none" } });
    expect(message.content).toEqual([expect.objectContaining({ type: "text", text: "Done." })]);
    expect(rig.chats()[0]!.body.tools).toBeUndefined();
  });

  it("an image block reaches the backend as a placeholder, not a 400", async () => {
    const rig = await llamaRig(bash);
    const b = body() as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const last = b.messages[b.messages.length - 1]!;
    (last.content as Anthropic.ContentBlockParam[]).push({ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } });
    const message = await sdk(rig).messages.create({ ...b, stream: false });
    expect(message.stop_reason).toBe("tool_use");
    const sent = rig.chats()[0]!.body.messages;
    expect(sent[sent.length - 1].content.endsWith(`\n${mediaPlaceholder("image")}`)).toBe(true);
    expect(JSON.stringify(sent)).not.toContain("iVBORw0KGgo=");
  });
});
