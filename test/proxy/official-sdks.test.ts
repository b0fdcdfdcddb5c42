/**
 * The official `openai` (6.x) and `@anthropic-ai/sdk` clients against the proxy, in front of a
 * loopback Ollama: every answer the proxy gives, streamed or not, must parse in the SDKs'
 * own code (`finalChatCompletion()`, `finalMessage()`), and retries never show.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { hermes, proxyRig, WEATHER_SCHEMA, type Rig } from "./support/harness.js";

const oaTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];
const anTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_SCHEMA }];
const ask = [{ role: "user" as const, content: "Weather in Oslo?" }];

const openai = (rig: Rig) => new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
const anthropic = (rig: Rig) => new Anthropic({ baseURL: rig.url, apiKey: "unused", maxRetries: 0 });

/** One OpenAI answer through the SDK: `create` unstreamed, `stream().finalChatCompletion()` streamed. */
async function chat(rig: Rig, stream: boolean, extra: Partial<Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, "stream">> = {}) {
  const params = { model: "qwen3:8b", messages: ask, tools: oaTools, ...extra };
  const client = openai(rig);
  return stream ? await client.chat.completions.stream(params).finalChatCompletion() : await client.chat.completions.create(params);
}

async function message(rig: Rig, stream: boolean, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) {
  const params = { model: "qwen3:8b", max_tokens: 256, messages: ask, tools: anTools, ...extra };
  const client = anthropic(rig);
  return stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
}

const RESCUES: [string, string][] = [
  ["Hermes <tool_call>", hermes("get_weather", { city: "Oslo" })],
  ["Mistral [TOOL_CALLS]", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]'],
  ["fenced JSON", 'Sure.\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'],
];

describe.each([false, true])("openai SDK, stream %s", (stream) => {
  it("plain text without tools passes through", async () => {
    const rig = await proxyRig([{ content: "Hello there." }]);
    const reply = await chat(rig, stream, { tools: undefined });
    expect(reply.choices[0]!.message.content).toBe("Hello there.");
    expect(reply.choices[0]!.finish_reason).toBe("stop");
    expect(rig.chats()[0]!.body.tools).toBeUndefined();
  });

  it("a native tool call comes back as tool_calls", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }]);
    const reply = await chat(rig, stream);
    const call = reply.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.type).toBe("function");
    expect(call.function.name).toBe("get_weather");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Oslo" });
    expect(call.id).toMatch(/\S/);
    expect(reply.choices[0]!.finish_reason).toBe("tool_calls");
    expect(rig.chats()[0]!.body.tools[0].function.name).toBe("get_weather");
  });

  it.each(RESCUES)("a %s text call is rescued into tool_calls", async (_name, text) => {
    const rig = await proxyRig([{ content: text }]);
    const reply = await chat(rig, stream);
    const call = reply.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect([call.function.name, JSON.parse(call.function.arguments)]).toEqual(["get_weather", { city: "Oslo" }]);
    expect(rig.chats()).toHaveLength(1);
    expect(rig.proxy.stats().rescues).toBe(1);
  });

  it("an unknown tool is retried inside the request; the caller sees only the good call", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }, { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }]);
    const reply = await chat(rig, stream);
    const call = reply.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe("get_weather");
    expect(JSON.stringify(reply)).not.toContain("get_wether");
    const [first, second] = rig.chats();
    expect(first!.body.messages).toHaveLength(1);
    expect(JSON.stringify(second!.body.messages)).toContain('There is no tool named \\"get_wether\\"');
    expect(rig.proxy.stats().retries).toBe(1);
  });

  it("schema-invalid arguments are retried", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "get_weather", args: { city: 42 } }] }, { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }]);
    const reply = await chat(rig, stream);
    const call = reply.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Oslo" });
    expect(JSON.stringify(rig.chats()[1]!.body.messages)).toMatch(/city/);
  });

  it("retries exhausted: the last answer, marked in the forge field, without the call to a tool never offered", async () => {
    const rig = await proxyRig(() => ({ toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }), { proxy: { maxRetries: 1 } });
    if (stream) {
      const chunks = [];
      for await (const chunk of await openai(rig).chat.completions.create({ model: "qwen3:8b", messages: ask, tools: oaTools, stream: true })) chunks.push(chunk);
      const last = chunks.at(-1) as unknown as { forge: { exhausted: { reason: string; attempts: number } } };
      expect(last.forge.exhausted).toMatchObject({ reason: "retries", attempts: 2 });
    } else {
      const { data, response } = await openai(rig).chat.completions.create({ model: "qwen3:8b", messages: ask, tools: oaTools }).withResponse();
      expect(response.headers.get("x-forge-exhausted")).toBe("retries");
      expect((data as unknown as { forge: { exhausted: { lastError: string } } }).forge.exhausted.lastError).toContain("get_wether");
      // get_wether was never offered: dropped, said in the forge field and the header, and the answer is its (empty) text.
      expect(data.choices[0]!.message.tool_calls).toBeUndefined();
      expect(data.choices[0]!.finish_reason).toBe("stop");
      expect((data as unknown as { forge: { exhausted: { dropped: unknown } } }).forge.exhausted.dropped).toEqual({ unoffered: 1, unofferedNames: ["get_wether"], overLimit: 0 });
      expect(response.headers.get("x-forge-dropped-calls")).toBe("1");
    }
    expect(rig.chats()).toHaveLength(2);
    expect(rig.proxy.stats().exhausted).toBe(1);
  });

  it("reasoning comes back as reasoning_content", async () => {
    const rig = await proxyRig([{ reasoning: "Oslo is in Norway.", content: "Cold." }]);
    if (stream) {
      let reasoning = "";
      let content = "";
      for await (const chunk of await openai(rig).chat.completions.create({ model: "qwen3:8b", messages: ask, stream: true })) {
        const delta = chunk.choices[0]?.delta as { reasoning_content?: string; content?: string | null } | undefined;
        reasoning += delta?.reasoning_content ?? "";
        content += delta?.content ?? "";
      }
      expect([reasoning, content]).toEqual(["Oslo is in Norway.", "Cold."]);
    } else {
      const reply = await chat(rig, false, { tools: undefined });
      expect(reply.choices[0]!.message).toMatchObject({ content: "Cold.", reasoning_content: "Oslo is in Norway." });
    }
  });

  it("usage is reported", async () => {
    const rig = await proxyRig([{ content: "ok", usage: { input: 30, output: 4 } }]);
    const reply = await chat(rig, stream, { tools: undefined, ...(stream ? { stream_options: { include_usage: true } } : {}) });
    expect(reply.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 });
  });
});

describe.each([false, true])("@anthropic-ai/sdk, stream %s", (stream) => {
  it("plain text", async () => {
    const rig = await proxyRig([{ content: "Hello there." }]);
    const reply = await message(rig, stream, { tools: undefined });
    expect(reply.content).toEqual([expect.objectContaining({ type: "text", text: "Hello there." })]);
    expect(reply.stop_reason).toBe("end_turn");
  });

  it("a native tool call comes back as a tool_use block", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }]);
    const reply = await message(rig, stream);
    expect(reply.stop_reason).toBe("tool_use");
    expect(reply.content).toEqual([expect.objectContaining({ type: "tool_use", name: "get_weather", input: { city: "Oslo" } })]);
  });

  it.each(RESCUES)("a %s text call is rescued into tool_use", async (_name, text) => {
    const rig = await proxyRig([{ content: text }]);
    const reply = await message(rig, stream);
    const use = reply.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect([use.name, use.input]).toEqual(["get_weather", { city: "Oslo" }]);
    expect(rig.proxy.stats().rescues).toBe(1);
  });

  it("unknown tool and bad arguments are retried; the caller sees the good call", async () => {
    const rig = await proxyRig([
      { toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] },
      { toolCalls: [{ name: "get_weather", args: { town: "Oslo" } }] },
      { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] },
    ]);
    const reply = await message(rig, stream);
    expect(reply.content).toEqual([expect.objectContaining({ type: "tool_use", name: "get_weather", input: { city: "Oslo" } })]);
    expect(rig.chats()).toHaveLength(3);
    expect(JSON.stringify(reply)).not.toMatch(/get_wether|town/);
  });

  it("retries exhausted: the forge field says so", async () => {
    const rig = await proxyRig(() => ({ content: "I think it is cold." }), { proxy: { maxRetries: 1 } });
    if (stream) {
      const events: Anthropic.RawMessageStreamEvent[] = [];
      for await (const event of await anthropic(rig).messages.create({ model: "qwen3:8b", max_tokens: 64, messages: ask, tools: anTools, tool_choice: { type: "any" }, stream: true })) events.push(event);
      const delta = events.find((e) => e.type === "message_delta") as unknown as { forge: { exhausted: { reason: string } } };
      expect(delta.forge.exhausted.reason).toBe("retries");
    } else {
      const reply = await message(rig, false, { tool_choice: { type: "any" } });
      expect(reply.content).toEqual([expect.objectContaining({ type: "text", text: "I think it is cold." })]);
      expect((reply as unknown as { forge: { exhausted: { reason: string } } }).forge.exhausted.reason).toBe("retries");
    }
    expect(rig.chats()).toHaveLength(2);
  });

  it("reasoning comes back as a thinking block before the answer", async () => {
    const rig = await proxyRig([{ reasoning: "Oslo is in Norway.", toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }]);
    const reply = await message(rig, stream);
    expect(reply.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((reply.content[0] as Anthropic.ThinkingBlock).thinking).toBe("Oslo is in Norway.");
  });

  it("usage is reported", async () => {
    const rig = await proxyRig([{ content: "ok", usage: { input: 30, output: 4 } }]);
    const reply = await message(rig, stream, { tools: undefined });
    expect(reply.usage).toMatchObject({ input_tokens: 30, output_tokens: 4 });
  });
});

describe("other backends behind the proxy", () => {
  it("OpenAI-compatible SSE backend, streamed tool call rescued from text", async () => {
    const rig = await proxyRig([{ content: hermes("get_weather", { city: "Oslo" }) }], { wire: "openai" });
    const reply = await chat(rig, true);
    const call = reply.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Oslo" });
    expect(rig.chats()[0]!.body.stream).toBe(true); // guarded prose streams; the call is judged when the answer is complete
  });

  it("the caller's model and sampling fields reach the backend", async () => {
    const rig = await proxyRig([{ content: "ok" }], { wire: "openai" });
    await chat(rig, false, { model: "other-model", temperature: 0.2, seed: 7, tools: undefined });
    expect(rig.chats()[0]!.body).toMatchObject({ model: "other-model", temperature: 0.2, seed: 7 });
  });
});
