/**
 * A model's `__proto__`, `constructor` or `prototype` argument through the proxy, on each front
 * door: an ordinary argument the caller's schema judges — a nudge to the model when the schema
 * refuses unknown properties, the call answered with it as an own key when the schema allows
 * it — never a 5xx ("broke the LLMResponse contract" was the answer to `__proto__` before), and
 * Object.prototype unchanged. Also the caller's side: such a top-level field rides through as
 * any unknown field does and never reaches an Ollama backend's `options` as junk.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DOORS, postDoor } from "./support/doors.js";
import { hermes, proxyRig } from "./support/harness.js";

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();
afterEach(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_NAMES);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

const LOOSE_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const KEYS = ["__proto__", "constructor", "prototype"] as const;

/** Tool-channel messages the backend was sent (the proxy's nudges to the model). */
const nudges = (body: { messages: { role: string; content: string }[] }) => body.messages.filter((m) => m.role === "tool").map((m) => m.content);

describe.each(DOORS)("the $name door ($path)", (door) => {
  it.each(KEYS)("pythonic get_weather(%s=…) against additionalProperties: false → a nudge, then the model's next call", async (key) => {
    const rig = await proxyRig([{ content: `[get_weather(${key}={"city": "x", "polluted": True})]` }, { content: hermes("get_weather", { city: "Oslo" }) }]);
    const res = await postDoor(rig.url, door, door.body());
    expect(res.status).toBe(200);
    expect(door.answerCall((await res.json()) as Record<string, unknown>)).toEqual({ name: "get_weather", args: { city: "Oslo" } });
    expect(rig.chats()).toHaveLength(2);
    expect(nudges(rig.chats()[1]!.body).join("\n")).toMatch(/\[InvalidArguments\][\s\S]*additional properties/);
  });

  it.each(KEYS)("pythonic get_weather(city=…, %s=…) against a schema that allows it → answered with it as an own key", async (key) => {
    const rig = await proxyRig([{ content: `[get_weather(city="Paris", ${key}={"polluted": True})]` }]);
    const res = await postDoor(rig.url, door, door.body({ schema: LOOSE_SCHEMA }));
    expect(res.status).toBe(200);
    const call = door.answerCall((await res.json()) as Record<string, unknown>);
    expect(call?.name).toBe("get_weather");
    const args = call!.args as Record<string, unknown>;
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.keys(args)).toEqual(["city", key]);
    expect(Object.getOwnPropertyDescriptor(args, key)?.value).toEqual({ polluted: true });
    expect(rig.chats()).toHaveLength(1);
  });

  it("a caller's history call with a __proto__ argument is kept as that key for the backend", async () => {
    const rig = await proxyRig([{ content: "Sunny." }]);
    const args = '{"city": "Oslo", "__proto__": {"polluted": true}}';
    const res = await postDoor(rig.url, door, door.body({ schema: LOOSE_SCHEMA, call: { args: door.name === "anthropic" ? JSON.parse(args) : args } }));
    expect(res.status).toBe(200);
    const sent = rig.chats()[0]!.body.messages[1].tool_calls[0].function.arguments as Record<string, unknown>;
    expect(Object.keys(sent)).toEqual(["city", "__proto__"]);
    expect(Object.getPrototypeOf(sent)).toBe(Object.prototype);
  });
});

describe("a caller's reserved top-level field names", () => {
  it("ride through to an OpenAI-style backend as own keys, like any unknown field", async () => {
    const rig = await proxyRig([{ content: "Hi." }], { wire: "openai" });
    const body = '{"model": "qwen3:8b", "messages": [{"role": "user", "content": "hi"}], "__proto__": {"stream": true}, "constructor": 1}';
    const res = await postDoor(rig.url, DOORS[0]!, body);
    expect(res.status).toBe(200);
    const sent = rig.chats()[0]!.body as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(sent, "__proto__")?.value).toEqual({ stream: true });
    expect(sent.constructor).toBe(1);
    expect(sent.stream).toBe(false);
  });

  it("are dropped for an Ollama backend, not mapped into its options", async () => {
    const rig = await proxyRig([{ content: "Hi." }], { wire: "ollama" });
    const body = '{"model": "qwen3:8b", "messages": [{"role": "user", "content": "hi"}], "constructor": 1, "temperature": 0.5, "__proto__": {"x": 1}}';
    expect((await postDoor(rig.url, DOORS[0]!, body)).status).toBe(200);
    const sent = rig.chats()[0]!.body as { options?: Record<string, unknown> };
    expect(sent.options).toMatchObject({ temperature: 0.5 });
    // Before, "constructor" looked up Object.prototype's and became options["function Object() { [native code] }"].
    expect(Object.keys(sent.options!).filter((k) => !/^\w+$/.test(k) || k === "constructor" || k === "__proto__")).toEqual([]);
    expect(Object.hasOwn(sent, "constructor")).toBe(false);
  });
});
