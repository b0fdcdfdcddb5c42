import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { textResponse, toolCallsResponse, type StreamChunk } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { ScriptedClient } from "../../src/clients/scripted.js";

const hi: WireMessage[] = [{ role: "user", content: "hi" }];
const specs = [{ name: "get_weather", description: "d", parameters: { type: "object" } }];

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

describe("ScriptedClient", () => {
  it("plays responses in order, calls functions with the request, and records every request", async () => {
    const client = new ScriptedClient({
      responses: [
        toolCallsResponse([{ tool: "get_weather", args: { city: "Paris" }, id: "c1" }]),
        (messages, tools) => textResponse(`${messages.length} messages, ${tools?.length ?? 0} tools`),
        async () => textResponse("async"),
      ],
    });
    expect(await client.send(hi, specs)).toEqual({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" }, id: "c1" }] });
    expect(await client.send([...hi, { role: "assistant", content: "x" }], specs)).toEqual(textResponse("2 messages, 1 tools"));
    expect(await client.send(hi)).toEqual(textResponse("async"));
    expect(client.requests).toEqual([{ messages: hi, tools: specs }, { messages: [...hi, { role: "assistant", content: "x" }], tools: specs }, { messages: hi }]);
    expect(client.remaining).toBe(0);
    expect(client.apiFormat).toBe("openai");
    expect(await client.getContextLength()).toBeUndefined();
  });

  it("keeps copies of requests and hands out copies of responses", async () => {
    const scripted = textResponse("same");
    const client = new ScriptedClient({ responses: [scripted, scripted] });
    const messages: WireMessage[] = [{ role: "user", content: "before" }];
    const first = await client.send(messages);
    messages[0]!.content = "after";
    (first as { content: string }).content = "mutated";
    expect(client.requests[0]!.messages[0]!.content).toBe("before");
    expect(await client.send(messages)).toEqual(textResponse("same"));
  });

  it("throws a clear error naming the request index past the end of the script", async () => {
    const client = new ScriptedClient({ responses: [textResponse("only")], apiFormat: "ollama" });
    await client.send(hi);
    await expect(client.send(hi)).rejects.toThrow(/no scripted response for request #1 \(the script has 1\)/);
    expect(client.apiFormat).toBe("ollama");
  });

  it("waits delayMs abortably and rejects with the signal's reason", async () => {
    // A delay far beyond the test's timeout: a rejection at all means the abort cut the wait short.
    const client = new ScriptedClient({ responses: [textResponse("late")], delayMs: 600_000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    await expect(client.send(hi, undefined, { signal: ac.signal })).rejects.toMatchObject({ name: "AbortError" });
    const quick = new ScriptedClient({ responses: [textResponse("ok")], delayMs: 5 });
    expect(await quick.send(hi)).toEqual(textResponse("ok"));
  });

  it("streams text and tool-call deltas, then FINAL", async () => {
    const call = { tool: "get_weather", args: { city: "Paris", days: 3 }, id: "c9" };
    const client = new ScriptedClient({ responses: [textResponse("It is sunny in Paris today, enjoy it."), toolCallsResponse([call], { reasoning: "need weather" })] });
    const text = await collect(client.sendStream!(hi));
    expect(text.at(-1)).toEqual({ type: "final", response: textResponse("It is sunny in Paris today, enjoy it.") });
    expect(text.filter((c) => c.type === "text_delta").map((c) => (c as { content: string }).content).join("")).toBe("It is sunny in Paris today, enjoy it.");
    const calls = await collect(client.sendStream!(hi));
    const deltas = calls.filter((c) => c.type === "tool_call_delta") as Extract<StreamChunk, { type: "tool_call_delta" }>[];
    expect(deltas[0]).toMatchObject({ index: 0, name: "get_weather", id: "c9" });
    expect(deltas.map((d) => d.content).join("")).toBe(JSON.stringify(call.args));
    expect(calls.filter((c) => c.type === "text_delta" && c.channel === "reasoning").map((c) => (c as { content: string }).content).join("")).toBe("need weather");
    expect(calls.at(-1)).toMatchObject({ type: "final", response: { type: "tool_calls", toolCalls: [call] } });
  });

  it("has no sendStream when stream is false, and validates its options", () => {
    expect(new ScriptedClient({ responses: [], stream: false }).sendStream).toBeUndefined();
    expect(() => new ScriptedClient({ responses: [{ type: "nope" } as never] })).toThrow(/entry 0/);
    expect(() => new ScriptedClient({} as never)).toThrow(InvalidArgumentError);
    expect(() => new ScriptedClient({ responses: [], delayMs: -1 })).toThrow(/delayMs/);
  });
});
