/**
 * `response_format` as a guardrail: the final answer is read out of prose and fences, checked
 * against the schema and retried inside the request with a nudge naming the failing paths;
 * the client gets valid JSON, or the last answer marked exhausted.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { proxyRig, type Rig } from "./support/harness.js";

const schema = { type: "object", properties: { city: { type: "string" }, tempC: { type: "number" } }, required: ["city", "tempC"], additionalProperties: false };
const jsonSchema = { type: "json_schema" as const, json_schema: { name: "weather", schema, strict: true } };
const ask = [{ role: "user" as const, content: "Weather in Oslo as JSON" }];
const openai = (rig: Rig) => new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });

async function complete(rig: Rig, stream: boolean, response_format: OpenAI.ChatCompletionCreateParams["response_format"]) {
  const params = { model: "qwen3:8b", messages: ask, response_format };
  const client = openai(rig);
  return stream ? await client.chat.completions.stream(params).finalChatCompletion() : await client.chat.completions.create(params);
}

describe.each([false, true])("stream %s", (stream) => {
  it("prose and fences around valid JSON are removed; the backend still gets response_format", async () => {
    const rig = await proxyRig([{ content: 'Sure! Here you go:\n```json\n{"city": "Oslo", "tempC": 4}\n```' }], { wire: "openai" });
    const reply = await complete(rig, stream, jsonSchema);
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ city: "Oslo", tempC: 4 });
    expect(rig.chats()).toHaveLength(1);
    expect(rig.chats()[0]!.body.response_format).toEqual(jsonSchema);
  });

  it("a cut-off answer and then a schema mismatch are retried with nudges naming what failed", async () => {
    const rig = await proxyRig([{ content: 'Sure! {"city":' }, { content: '{"city": "Oslo", "tempC": "cold"}' }, { content: '{"city": "Oslo", "tempC": 4}' }], { wire: "openai" });
    const reply = await complete(rig, stream, jsonSchema);
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ city: "Oslo", tempC: 4 });
    const chats = rig.chats();
    expect(chats).toHaveLength(3);
    const nudge = (n: number) => (chats[n]!.body.messages as { role: string; content: string }[]).at(-1)!;
    expect(nudge(1)).toMatchObject({ role: "user", content: expect.stringMatching(/no complete JSON value/) });
    expect(nudge(2).content).toMatch(/tempC: must be number/);
    expect(nudge(2).content).toMatch(/only JSON matching the schema "weather"/);
  });

  it("json_object: an answer that is not an object is retried", async () => {
    const rig = await proxyRig([{ content: "It is 4 °C in Oslo." }, { content: '{"tempC": 4}' }], { wire: "openai" });
    const reply = await complete(rig, stream, { type: "json_object" });
    expect(reply.choices[0]!.message.content).toBe('{"tempC": 4}');
    expect(rig.chats()).toHaveLength(2);
  });
});

it("when retries run out the client gets the last answer, marked exhausted", async () => {
  const rig = await proxyRig(() => ({ content: "No JSON today." }), { wire: "openai", proxy: { maxRetries: 1 } });
  const response = await fetch(`${rig.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen3:8b", messages: ask, response_format: { type: "json_object" } }),
  });
  expect(response.headers.get("x-forge-exhausted")).toBe("retries");
  const body = (await response.json()) as { choices: { message: { content: string } }[]; forge?: { exhausted: { lastError: string } } };
  expect(body.choices[0]!.message.content).toBe("No JSON today.");
  expect(JSON.stringify(body)).toMatch(/not the requested JSON/);
  expect(rig.chats()).toHaveLength(2);
});

it("a streamed request gets the judged JSON whole, then [DONE]", async () => {
  const rig = await proxyRig([{ content: '{"city": "Oslo", "tempC": 4}' }], { wire: "openai", proxy: { keepAliveMs: 5 } });
  const response = await fetch(`${rig.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen3:8b", messages: ask, stream: true, response_format: jsonSchema }),
  });
  const text = await response.text();
  expect(text).toContain('"content":"{\\"city\\"');
  expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
});

it("a response_format schema that does not compile is the caller's 400", async () => {
  const rig = await proxyRig([]);
  const response = await fetch(`${rig.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: ask, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "nope" } } } }),
  });
  expect(response.status).toBe(400);
  expect(await response.text()).toMatch(/response_format json_schema.schema is not a valid JSON Schema/);
});

describe("Anthropic structured outputs", () => {
  it.each(["output_config", "output_format"])("%s is checked like response_format and reaches the backend as response_format", async (field) => {
    const rig = await proxyRig([{ content: "Sure thing." }, { content: 'Here: {"city": "Oslo", "tempC": 4}' }], { wire: "openai" });
    const format = { type: "json_schema", schema };
    const response = await fetch(`${rig.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "qwen3:8b", max_tokens: 256, messages: ask, ...(field === "output_config" ? { output_config: { format } } : { output_format: format }) }),
    });
    const body = (await response.json()) as { content: { type: string; text: string }[] };
    expect(body.content).toEqual([{ type: "text", text: '{"city": "Oslo", "tempC": 4}' }]);
    expect(rig.chats()).toHaveLength(2);
    expect(rig.chats()[0]!.body.response_format).toMatchObject({ type: "json_schema", json_schema: { schema } });
  });
});
