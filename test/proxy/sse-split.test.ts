/**
 * Every SSE stream the proxy emits, cut at every byte boundary (and into random pieces), still
 * parses to the same events: a client's TCP reads may end anywhere, inside a multi-byte
 * character too.
 */
import fc from "fast-check";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { hermes, proxyRig, WEATHER_SCHEMA } from "./support/harness.js";
import type { ModelReply } from "../clients/support/wire.js";

const oaTools = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_SCHEMA } }];
const anTools = [{ name: "get_weather", input_schema: WEATHER_SCHEMA }];

/** Raw bytes of one proxy stream. */
async function capture(dialect: "openai" | "anthropic", script: ModelReply[], body: Record<string, unknown>, proxy = {}): Promise<Uint8Array> {
  const rig = await proxyRig(script, { proxy });
  const path = dialect === "openai" ? "/v1/chat/completions" : "/v1/messages";
  const res = await fetch(`${rig.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen3:8b", max_tokens: 128, stream: true, messages: [{ role: "user", content: "Weather in Oslo?" }], ...body }),
  });
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return new Uint8Array(await res.arrayBuffer());
}

/** Parse `bytes` delivered as the given chunks (UTF-8 decoded in stream mode, as a client would). */
function parse(bytes: Uint8Array, cuts: number[]): { events: EventSourceMessage[]; comments: string[] } {
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  const decoder = new TextDecoder();
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    parser.feed(decoder.decode(bytes.subarray(from, cut), { stream: true }));
    from = cut;
  }
  parser.feed(decoder.decode());
  return { events, comments };
}

const CASES: [string, "openai" | "anthropic", ModelReply[], Record<string, unknown>, Record<string, unknown>?][] = [
  ["openai text, unguarded, non-ASCII", "openai", [{ content: "Kaldt: −3 °C i Oslo 🌨️ — ta på deg jakke." }], {}],
  ["openai rescued tool call", "openai", [{ content: hermes("get_weather", { city: "Tromsø" }) }], { tools: oaTools }],
  ["openai reasoning + text", "openai", [{ reasoning: "Norway → cold.", content: "Cold ❄️." }], { stream_options: { include_usage: true } }],
  ["openai exhausted", "openai", [{ content: "nope" }, { content: "still nope" }], { tools: oaTools, tool_choice: "required" }, { maxRetries: 1 }],
  ["anthropic text, non-ASCII", "anthropic", [{ content: "Kaldt: −3 °C i Oslo 🌨️." }], {}],
  ["anthropic tool_use after a retry", "anthropic", [{ toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }, { toolCalls: [{ name: "get_weather", args: { city: "Ålesund" } }] }], { tools: anTools }],
  ["anthropic thinking + tool_use", "anthropic", [{ reasoning: "Need weather…", toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }], { tools: anTools }],
];

describe("proxy SSE streams re-split", () => {
  it.each(CASES)("%s: every byte boundary parses to the same events", async (_name, dialect, script, body, proxy) => {
    const bytes = await capture(dialect, script, body, proxy);
    const whole = parse(bytes, []);
    expect(whole.events.length).toBeGreaterThan(2);
    for (const e of whole.events) if (e.data !== "[DONE]") JSON.parse(e.data); // every data line is whole JSON
    if (dialect === "openai") expect(whole.events.at(-1)!.data).toBe("[DONE]");
    else expect(whole.events.at(-1)!.event).toBe("message_stop");
    for (let k = 1; k < bytes.length; k++) expect(parse(bytes, [k])).toEqual(whole);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (cuts) => {
        expect(parse(bytes, cuts.sort((a, b) => a - b))).toEqual(whole);
      }),
      { numRuns: 100 },
    );
  });
});
