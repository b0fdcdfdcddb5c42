/**
 * Requests with thousands of tools through the proxy (issue 46): what each costs is counted in
 * schema checks and compiles (jsonSchemaWork), never timed. A request pays a check per shape it
 * is the first to show and a compile per shape the model calls; a retry and a repeat pay nothing.
 */
import { describe, expect, it } from "vitest";
import { jsonSchemaWork, type JSONSchema } from "../../src/core/tool.js";
import { unique } from "../support/schema-work.js";
import { proxyRig, type Rig, type Script } from "./support/harness.js";

const ask = [{ role: "user", content: "Do the thing." }];
/** Thousands of tools estimate to more tokens than the default window; the backend reports room for them. */
const ROOMY = 10_000_000;

const openaiTools = (count: number, schemaOf: (i: number) => JSONSchema) =>
  Array.from({ length: count }, (_, i) => ({ type: "function", function: { name: `t${i}`, description: `tool ${i}`, parameters: schemaOf(i) } }));

async function rig(script: Script): Promise<Rig> {
  return proxyRig(script, { wire: "openai", contextLength: ROOMY });
}

async function chat(r: Rig, tools: unknown[]): Promise<{ response: Response; checked: number; compiled: number }> {
  const before = jsonSchemaWork();
  const response = await fetch(`${r.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen3:8b", messages: ask, tools }),
  });
  await response.clone().text();
  const after = jsonSchemaWork();
  return { response, checked: after.checked - before.checked, compiled: after.compiled - before.compiled };
}

describe("a request with thousands of tools", () => {
  it("5,000 new tools whose answer calls one compile one schema", async () => {
    const tag = unique();
    const tools = openaiTools(5_000, (i) => ({ type: "object", properties: { [`${tag}_${i}`]: { type: "string" } }, required: [`${tag}_${i}`] }));
    const r = await rig([{ toolCalls: [{ name: "t4321", args: { [`${tag}_4321`]: "x" } }] }]);
    const sent = await chat(r, tools);
    expect(sent.response.status).toBe(200);
    expect(sent.response.headers.get("x-forge-attempts")).toBe("1");
    expect(sent.checked).toBe(5_000);
    expect(sent.compiled).toBe(1);
    const body = (await sent.response.json()) as { choices: { message: { tool_calls: { function: { name: string } }[] } }[] };
    expect(body.choices[0]!.message.tool_calls[0]!.function.name).toBe("t4321");
  });

  it("1,000 tools of 3 shapes, judged over two attempts: 3 checks, the called shape compiled once; the same request again costs nothing", async () => {
    const tag = unique();
    const shapes: JSONSchema[] = [
      { type: "object", properties: { [`${tag}_path`]: { type: "string" } }, required: [`${tag}_path`] },
      { type: "object", properties: { [`${tag}_q`]: { type: "string" } }, required: [`${tag}_q`] },
      { type: "object", properties: { [`${tag}_n`]: { type: "integer" } }, required: [`${tag}_n`] },
    ];
    const tools = openaiTools(1_000, (i) => shapes[i % 3]!);
    // Each request: a call with a wrong argument type (retried with a nudge), then a good one.
    const r = await rig((n) => ({ toolCalls: [{ name: "t3", args: { [`${tag}_path`]: n % 2 === 0 ? 7 : "/tmp" } }] }));
    const first = await chat(r, tools);
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get("x-forge-attempts")).toBe("2");
    expect(first).toMatchObject({ checked: 3, compiled: 1 });
    const again = await chat(r, tools);
    expect(again.response.headers.get("x-forge-attempts")).toBe("2");
    expect(again).toMatchObject({ checked: 0, compiled: 0 });
    expect(r.chats()).toHaveLength(4);
  });

  it("a malformed schema among them is still the caller's 400 naming the tool, and the backend is not asked", async () => {
    const tag = unique();
    const tools = openaiTools(1_000, (i) => (i === 777 ? { type: "object", properties: { a: { type: "nope" } } } : { type: "object", properties: { [`${tag}_${i % 5}`]: { type: "string" } } }));
    const r = await rig([{ content: "never asked" }]);
    const sent = await chat(r, tools);
    expect(sent.response.status).toBe(400);
    expect(await sent.response.text()).toMatch(/tool \\"t777\\": parameters is not a valid JSON Schema: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/);
    expect(sent.compiled).toBe(0);
    expect(r.chats()).toHaveLength(0);
  });
});
