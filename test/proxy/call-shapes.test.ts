/**
 * Every call shape guarded the same way: a call to an unknown tool, written natively, as bare
 * JSON or inside tags, is retried inside the request with the one unknown-tool nudge; the
 * model's prose before a rescued call reaches the caller beside the call, streamed or not.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { ModelReply } from "../clients/support/wire.js";
import { hermes, proxyRig, WEATHER_SCHEMA, type Rig } from "./support/harness.js";

const oaTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];
const anTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_SCHEMA }];
const ask = [{ role: "user" as const, content: "Weather in Oslo?" }];

async function chat(rig: Rig, stream: boolean) {
  const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const params = { model: "qwen3:8b", messages: ask, tools: oaTools };
  return stream ? await client.chat.completions.stream(params).finalChatCompletion() : await client.chat.completions.create(params);
}

async function message(rig: Rig, stream: boolean) {
  const client = new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0 });
  const params = { model: "qwen3:8b", max_tokens: 256, messages: ask, tools: anTools };
  return stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
}

/** The text of every message the backend saw on its second request (the retry). */
const retryTranscript = (rig: Rig) => JSON.stringify(rig.chats()[1]?.body.messages ?? []);

const UNKNOWN: [string, ModelReply][] = [
  ["bare JSON", { content: '{"name": "get_wether", "arguments": {"city": "Oslo"}}' }],
  ["Hermes tags", { content: hermes("get_wether", { city: "Oslo" }) }],
  ["a native call", { toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }],
];

describe.each(["ollama", "openai"] as const)("%s backend", (wire) => {
  describe.each([false, true])("stream %s", (stream) => {
    it.each(UNKNOWN)("a call to an unknown tool as %s is retried with the unknown-tool nudge", async (_, first) => {
      const rig = await proxyRig([first, { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }], { wire });
      const reply = await chat(rig, stream);
      expect(reply.choices[0]!.message.tool_calls?.map((c) => c.type === "function" && c.function.name)).toEqual(["get_weather"]);
      expect(rig.chats()).toHaveLength(2);
      const transcript = retryTranscript(rig);
      expect(transcript).toContain('[UnknownTool] There is no tool named \\"get_wether\\". Available tools: \\"get_weather\\"');
      expect(transcript).not.toContain("plain text, not a tool call");
    });

    it("prose before a rescued call is the message content beside tool_calls (OpenAI)", async () => {
      const rig = await proxyRig([{ content: `Let me check. ${hermes("get_weather", { city: "Oslo" })}` }], { wire });
      const reply = await chat(rig, stream);
      expect(reply.choices[0]!.message.content).toBe("Let me check.");
      expect(reply.choices[0]!.message.tool_calls).toHaveLength(1);
      expect(reply.choices[0]!.finish_reason).toBe("tool_calls");
    });

    it("prose before a rescued call is a text block before tool_use (Anthropic)", async () => {
      const rig = await proxyRig([{ content: `Let me check. ${hermes("get_weather", { city: "Oslo" })}` }], { wire });
      const reply = await message(rig, stream);
      expect(reply.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
      expect(reply.content[0]).toMatchObject({ type: "text", text: "Let me check." });
      expect(reply.content[1]).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Oslo" } });
      expect(reply.stop_reason).toBe("tool_use");
    });

    it("prose beside a native call is kept too", async () => {
      const rig = await proxyRig([{ content: "Checking the forecast.", toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }], { wire });
      const reply = await chat(rig, stream);
      expect(reply.choices[0]!.message.content).toBe("Checking the forecast.");
      expect(reply.choices[0]!.message.tool_calls).toHaveLength(1);
    });
  });
});

it("an unknown-tool call that never gets fixed ends as the model's last text, marked exhausted", async () => {
  const rig = await proxyRig(() => ({ content: '{"name": "get_wether", "arguments": {"city": "Oslo"}}' }), { proxy: { maxRetries: 1 } });
  const response = await fetch(`${rig.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen3:8b", messages: ask, tools: oaTools }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-forge-exhausted")).toBe("retries");
  const body = (await response.json()) as { choices: { message: { content: string; tool_calls?: unknown } }[]; forge?: { lastError: string } };
  expect(body.choices[0]!.message.content).toBe('{"name": "get_wether", "arguments": {"city": "Oslo"}}');
  expect(body.choices[0]!.message.tool_calls).toBeUndefined();
  expect(rig.chats()).toHaveLength(2);
});
