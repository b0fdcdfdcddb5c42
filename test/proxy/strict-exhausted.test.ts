/**
 * When retries run out, what the caller gets on every door, streamed and not: never a call to a
 * tool the request did not offer, never more calls than the limit. Said in the `forge` field, a
 * header (unstreamed) and /metrics.
 */
import { describe, expect, it } from "vitest";
import { proxyRig, WEATHER_SCHEMA } from "./support/harness.js";

const hostile = { content: "On it.", toolCalls: ["delete_everything", "constructor", "__proto__", "toString"].map((name) => ({ name, args: {} })) };
const flood = { toolCalls: Array.from({ length: 5_000 }, (_, i) => ({ name: "get_weather", args: { city: `c${i}` } })) };

async function ask(url: string, stream: boolean) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen3:8b", stream, messages: [{ role: "user", content: "Weather?" }], tools: [{ type: "function", function: { name: "get_weather", parameters: WEATHER_SCHEMA } }] }),
  });
  if (!stream) return { headers: res.headers, body: (await res.json()) as { choices: { message: { content: string | null; tool_calls?: { function: { name: string } }[] }; finish_reason: string }[]; forge: { exhausted: { dropped?: unknown } } } };
  const text = await res.text();
  const events = text.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string; tool_calls?: { function: { name?: string } }[] }; finish_reason: string | null }[]; forge?: { exhausted: { dropped?: unknown } } });
  return { headers: res.headers, events };
}

describe("an exhausted answer hands on only offered calls, within the limit", () => {
  it.each([false, true])("calls to tools never offered (prototype names too) are dropped; the text stays, with a normal stop (stream %s)", async (stream) => {
    const rig = await proxyRig(() => hostile, { proxy: { maxRetries: 1 } });
    const got = await ask(rig.url, stream);
    const dropped = { unoffered: 4, unofferedNames: ["delete_everything", "constructor", "__proto__", "toString"], overLimit: 0 };
    if ("body" in got && got.body) {
      expect(got.body.choices[0]!.message).toMatchObject({ content: "On it." });
      expect(got.body.choices[0]!.message.tool_calls).toBeUndefined();
      expect(got.body.choices[0]!.finish_reason).toBe("stop");
      expect(got.body.forge.exhausted.dropped).toEqual(dropped);
      expect(got.headers.get("x-forge-dropped-calls")).toBe("4");
    } else {
      const events = got.events!;
      expect(events.flatMap((e) => e.choices[0]?.delta.tool_calls ?? [])).toEqual([]);
      expect(events.map((e) => e.choices[0]?.finish_reason).filter(Boolean)).toEqual(["stop"]);
      expect(events.find((e) => e.forge)?.forge?.exhausted.dropped).toEqual(dropped);
    }
    const metrics = await (await fetch(`${rig.url}/metrics`)).text();
    expect(metrics).toMatch(/forge_proxy_dropped_calls_total\{api="openai",reason="unoffered"\} 4/);
  });

  it.each([false, true])("5,000 calls where the limit is 64: 64 handed on (stream %s)", async (stream) => {
    const rig = await proxyRig(() => flood, { proxy: { maxRetries: 1 } });
    const got = await ask(rig.url, stream);
    const names = "body" in got && got.body ? (got.body.choices[0]!.message.tool_calls ?? []) : got.events!.flatMap((e) => e.choices[0]?.delta.tool_calls ?? []).filter((c) => c.function.name !== undefined);
    expect(names).toHaveLength(64);
    expect(rig.chats()).toHaveLength(2);
  });
});
