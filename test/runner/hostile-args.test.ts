/**
 * A model's hostile arguments through WorkflowRunner: `__proto__`/`constructor`/`prototype`
 * argument names (rescued from text or sent structured) are ordinary keys the tool's schema
 * judges — a nudge when it refuses unknown keys, a normal run when it allows them — and
 * absurdly nested arguments strings are a nudge too; never a crash, never a changed
 * Object.prototype.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { textResponse, toolCallsResponse } from "../../src/core/llm.js";
import type { Message } from "../../src/core/messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { WorkflowRunner } from "../../src/runner.js";

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();
afterEach(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_NAMES);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

const seen: unknown[] = [];
const strictWeather = defineTool({
  name: "get_weather",
  description: "Weather for a city",
  jsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  execute: (args: unknown) => (seen.push(args), `sunny in ${String((args as { city: string }).city)}`),
});
const looseWeather = defineTool({
  name: "get_weather",
  description: "Weather for a city",
  jsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: (args: unknown) => (seen.push(args), "sunny"),
});
const finish = defineTool({ name: "finish", description: "Done", parameters: z.object({ summary: z.string() }), execute: ({ summary }) => summary });
const workflowWith = (weather: typeof strictWeather) =>
  new Workflow({ name: "weather", tools: { get_weather: weather, finish }, terminalTool: "finish", systemPromptTemplate: "You report the weather." });

const runnerWith = (client: ScriptedClient, messages: Message[]) =>
  new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 100_000 }), onMessage: (m) => messages.push(m), maxRetries: 2 });
const good = toolCallsResponse([{ tool: "get_weather", args: { city: "Oslo" }, id: "c2" }]);
const done = toolCallsResponse([{ tool: "finish", args: { summary: "ok" }, id: "c3" }]);

describe.each(["__proto__", "constructor", "prototype"])("a %s argument", (key) => {
  it.each([
    ["rescued from pythonic text", textResponse(`[get_weather(city="Paris", ${key}={"polluted": True})]`)],
    ["rescued from a Hermes call", textResponse(`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", ${JSON.stringify(key)}: {"polluted": true}}}</tool_call>`)],
    ["sent as a structured call", toolCallsResponse([{ tool: "get_weather", args: JSON.parse(`{"city": "Paris", ${JSON.stringify(key)}: {"polluted": true}}`), id: "c1" }])],
  ])("%s: a schema without additionalProperties nudges, and the run goes on", async (_how, first) => {
    seen.length = 0;
    const messages: Message[] = [];
    const runner = runnerWith(new ScriptedClient({ responses: [first, good, done] }), messages);
    await expect(runner.run(workflowWith(strictWeather), "weather?")).resolves.toBe("ok");
    expect(messages.find((m) => m.role === "tool" && m.content.includes("[InvalidArguments]"))?.content).toMatch(/additional properties/);
    expect(seen).toEqual([{ city: "Oslo" }]);
    expect(() => JSON.stringify(runner.snapshot())).not.toThrow();
  });

  it("rescued from pythonic text: a schema that allows it runs the tool with it as an own key", async () => {
    seen.length = 0;
    const runner = runnerWith(new ScriptedClient({ responses: [textResponse(`[get_weather(city="Paris", ${key}={"polluted": True})]`), done] }), []);
    await expect(runner.run(workflowWith(looseWeather), "weather?")).resolves.toBe("ok");
    expect(seen).toHaveLength(1);
    const args = seen[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.keys(args)).toEqual(["city", key]);
    expect(JSON.stringify(args)).toBe(`{"city":"Paris",${JSON.stringify(key)}:{"polluted":true}}`);
  });
});

describe("absurdly nested arguments from the model", () => {
  const nudgeOf = (messages: Message[]) => messages.find((m) => m.meta.type === "retry_nudge" || m.content.includes("[InvalidArguments]"))?.content;

  it.each([20_000, 100_000])("a %d-deep array as the arguments string: the not-an-object nudge, then the run goes on", async (depth) => {
    const messages: Message[] = [];
    const deep = toolCallsResponse([{ tool: "get_weather", args: "[".repeat(depth) + "]".repeat(depth), id: "c1" }]);
    const runner = runnerWith(new ScriptedClient({ responses: [deep, good, done] }), messages);
    await expect(runner.run(workflowWith(strictWeather), "weather?")).resolves.toBe("ok");
    expect(nudgeOf(messages)).toMatch(/must be a JSON object/);
    expect(() => JSON.stringify(runner.snapshot())).not.toThrow();
  });

  it.each([20_000, 100_000])("a %d-deep object a schema lets through: the args-too-deep nudge, then the run goes on", async (depth) => {
    const messages: Message[] = [];
    const args = `{"city": "Paris", "extra": ${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;
    const deep = toolCallsResponse([{ tool: "get_weather", args, id: "c1" }]);
    const runner = runnerWith(new ScriptedClient({ responses: [deep, good, done] }), messages);
    await expect(runner.run(workflowWith(looseWeather), "weather?")).resolves.toBe("ok");
    expect(nudgeOf(messages)).toMatch(/nested more than 256 levels/);
    expect(() => JSON.stringify(runner.snapshot())).not.toThrow();
  });
});
