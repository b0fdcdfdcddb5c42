/**
 * Guarded streaming: a streaming caller with tools gets prose as the backend writes it, held
 * back only from where a call may start (src/parsing/stream-judge.ts); calls come once the
 * whole answer is judged. The official SDKs stream through the proxy in front of a backend that
 * writes one wire line at a time when the test lets it — "before the backend finished" is an
 * ordering of events, never a measured time.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { hermes, WEATHER_SCHEMA } from "./support/harness.js";
import { pacedRig, type PacedRig } from "./support/paced-backend.js";

const oaTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];
const anTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_SCHEMA }];
const ask = [{ role: "user" as const, content: "Weather in Oslo?" }];
const PROSE = "The weather in Oslo is mild today, around twelve degrees with a light breeze.";

interface Seen {
  content: string[];
  calls: { name: string; args: string }[];
  /** Position of each kind of event in rig.log. */
  log: string[];
}

/** Stream one chat completion; the backend may finish only after the client's first content delta. */
async function streamChat(rig: PacedRig, extra: Partial<OpenAI.ChatCompletionCreateParamsStreaming> = {}): Promise<Seen> {
  const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
  rig.release(3);
  const stream = await client.chat.completions.create({ model: "qwen3:8b", messages: ask, tools: oaTools, stream: true, ...extra });
  const seen: Seen = { content: [], calls: [], log: rig.log };
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) {
      if (seen.content.length === 0) rig.log.push("client:first-content");
      seen.content.push(delta.content);
    }
    for (const call of delta?.tool_calls ?? []) {
      if (call.function?.name) {
        rig.log.push("client:call");
        seen.calls.push({ name: call.function.name, args: "" });
      }
      if (call.function?.arguments) seen.calls.at(-1)!.args += call.function.arguments;
    }
    if (delta?.content || chunk.choices[0]?.finish_reason) rig.release();
  }
  rig.release();
  return seen;
}

const before = (log: string[], a: string, b: string) => log.indexOf(a) >= 0 && log.indexOf(a) < log.indexOf(b);

describe.each(["ollama", "openai"] as const)("guarded streaming, %s backend", (wire) => {
  it("prose reaches the openai client before the backend finished", async () => {
    const rig = await pacedRig([{ content: PROSE }], wire);
    const seen = await streamChat(rig);
    expect(before(seen.log, "client:first-content", "backend:end")).toBe(true);
    expect(seen.content.join("")).toBe(PROSE);
    expect(rig.chats()[0]!.body.stream).toBe(true);
  });

  it("prose reaches the anthropic client before the backend finished", async () => {
    const rig = await pacedRig([{ content: PROSE }], wire);
    const client = new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0 });
    rig.release(3);
    const stream = await client.messages.create({ model: "qwen3:8b", max_tokens: 256, messages: ask, tools: anTools, stream: true });
    let text = "";
    for await (const event of stream) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        if (text === "") rig.log.push("client:first-content");
        text += event.delta.text;
        rig.release();
      }
    }
    expect(before(rig.log, "client:first-content", "backend:end")).toBe(true);
    expect(text).toBe(PROSE);
  });

  it("a Hermes call after prose: the prose streams, then the call", async () => {
    const rig = await pacedRig([{ content: `Let me check that for you. ${hermes("get_weather", { city: "Oslo" })}` }], wire);
    const seen = await streamChat(rig);
    expect(before(seen.log, "client:first-content", "backend:end")).toBe(true);
    expect(before(seen.log, "backend:end", "client:call")).toBe(true);
    expect(seen.content.join("")).toBe("Let me check that for you.");
    expect(seen.calls).toEqual([{ name: "get_weather", args: '{"city":"Oslo"}' }]);
  });

  it("a bare-JSON call: no JSON text leaks, the call arrives", async () => {
    const rig = await pacedRig([{ content: '{"name": "get_weather", "arguments": {"city": "Oslo"}}' }], wire);
    rig.release(); // nothing is released before the call, so nothing could pace the backend
    const seen = await streamChat(rig);
    expect(seen.content).toEqual([]);
    expect(seen.calls).toEqual([{ name: "get_weather", args: '{"city":"Oslo"}' }]);
  });

  it("a fence with ordinary code is released as prose", async () => {
    const text = "Here is how:\n```js\nconst weather = await get({ city: \"Oslo\" });\n```\nThat is all.";
    const rig = await pacedRig([{ content: text }], wire);
    const seen = await streamChat(rig);
    expect(seen.content.join("")).toBe(text);
    expect(seen.calls).toEqual([]);
  });

  it("reasoning written inline (<think>) is not sent twice when the final answer splits it off", async () => {
    const rig = await pacedRig([{ content: "<think>Oslo is north.</think>\nIt is sunny." }], wire);
    rig.release();
    const seen = await streamChat(rig);
    const text = seen.content.join("");
    expect(text.endsWith("It is sunny.")).toBe(true);
    expect(text.split("It is sunny.")).toHaveLength(2);
  });

  it("a retry after prose went out keeps that prose and adds the retried answer", async () => {
    const rig = await pacedRig(
      [
        { content: `Let me check. ${hermes("get_wether", { city: "Oslo" })}` },
        { content: "Checking again.", toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] },
      ],
      wire,
    );
    const seen = await streamChat(rig);
    expect(rig.chats()).toHaveLength(2);
    expect(seen.content.join("")).toBe("Let me check.Checking again.");
    expect(seen.calls).toEqual([{ name: "get_weather", args: '{"city":"Oslo"}' }]);
    expect(JSON.stringify(seen)).not.toContain("get_wether");
  });

  it("an anthropic client gets the prose as a text block, then the tool_use block", async () => {
    const rig = await pacedRig([{ content: `Let me check. ${hermes("get_weather", { city: "Oslo" })}` }], wire);
    rig.release();
    const client = new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0 });
    const message = await client.messages.stream({ model: "qwen3:8b", max_tokens: 256, messages: ask, tools: anTools }).finalMessage();
    expect(message.content).toMatchObject([
      { type: "text", text: "Let me check." },
      { type: "tool_use", name: "get_weather", input: { city: "Oslo" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it.each([
    ["tool_choice required", { tool_choice: "required" as const }],
    ["a named tool", { tool_choice: { type: "function" as const, function: { name: "get_weather" } } }],
  ])("%s keeps the whole-answer judgement (no live prose)", async (_name, extra) => {
    const rig = await pacedRig([{ toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }], wire);
    rig.release();
    const seen = await streamChat(rig, extra);
    expect(rig.chats()[0]!.body.stream).toBe(false);
    expect(seen.calls).toEqual([{ name: "get_weather", args: '{"city":"Oslo"}' }]);
  });

  it("--inject-respond-tool keeps the whole-answer judgement", async () => {
    const rig = await pacedRig([{ content: PROSE }, { toolCalls: [{ name: "respond", args: { message: PROSE } }] }], wire, { injectRespondTool: true });
    rig.release();
    const seen = await streamChat(rig);
    expect(rig.chats()[0]!.body.stream).toBe(false);
    expect(seen.content.join("")).toBe(PROSE);
  });
});
