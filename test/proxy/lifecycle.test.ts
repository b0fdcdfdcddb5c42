/**
 * A request's life around the answer: keep-alives while validating, the backend request
 * aborted when the caller leaves, shutdown with requests in flight, the stats, the injected
 * respond tool.
 */
import type { ServerResponse } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { ollamaChat } from "../clients/support/wire.js";
import { hermes, proxyRig, WEATHER_SCHEMA, WINDOW_PATHS, windowAnswer } from "./support/harness.js";

const serve = useFakeServers();
const ask = [{ role: "user", content: "Weather in Oslo?" }];
const oaTools = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_SCHEMA } }];

const post = (url: string, body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });

/** Poll `check` until it holds: generous, since the deadline only matters when something is broken. */
const until = <T>(check: () => T) => vi.waitUntil(check, { timeout: 30_000, interval: 2 });

/** A backend that holds every chat request open and reports when the proxy drops it. */
async function holdingBackend() {
  let arrived = 0;
  let dropped = 0;
  let release: ((res: ServerResponse) => void) | undefined;
  const backend = await serve((req, res) => {
    if (WINDOW_PATHS.has(req.path)) return sendJson(res, 200, windowAnswer(req.path, 32_768));
    arrived++;
    res.on("close", () => dropped++);
    release?.(res);
  });
  return {
    backend,
    waitForArrival: (count: number) => until(() => arrived >= count),
    waitForDrop: (count: number) => until(() => dropped >= count),
    onRequest: (fn: (res: ServerResponse) => void) => (release = fn),
  };
}

describe("keep-alives while a guarded answer is validated", () => {
  it("OpenAI streams get `: ping` comments, Anthropic streams `event: ping`, before the answer", async () => {
    // The backend answers once the caller has read three pings: the order is caused, not timed.
    const answers: (() => void)[] = [];
    const backend = await serve((req, res) => {
      if (WINDOW_PATHS.has(req.path)) return sendJson(res, 200, windowAnswer(req.path, 32_768));
      answers.push(() => sendJson(res, 200, ollamaChat({ content: hermes("get_weather", { city: "Oslo" }) }, "qwen3:8b")));
    });
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: backend.url, think: false }), keepAliveMs: 30 });
    const { url } = await proxy.listen({ port: 0 });
    /** The whole stream, the backend's answer released after `pings` keep-alives reached the caller. */
    const streamAfterPings = async (path: string, body: Record<string, unknown>, ping: RegExp) => {
      const reader = (await post(`${url}${path}`, body)).body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while ((text.match(ping) ?? []).length < 3) text += (await reader.read()).value ?? "";
      (await until(() => answers.shift()))();
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
      return text;
    };
    try {
      const openai = await streamAfterPings("/v1/chat/completions", { model: "qwen3:8b", messages: ask, tools: oaTools, stream: true }, /^: ping$/gm);
      const pings = openai.split("\n").filter((l) => l === ": ping").length;
      expect(pings).toBeGreaterThanOrEqual(3);
      expect(openai.indexOf(": ping")).toBeLessThan(openai.indexOf('"tool_calls"'));
      const anthropic = await streamAfterPings(
        "/v1/messages",
        { model: "qwen3:8b", max_tokens: 64, messages: ask, tools: [{ name: "get_weather", input_schema: WEATHER_SCHEMA }], stream: true },
        /event: ping\ndata: \{"type":"ping"\}/g,
      );
      expect(anthropic.match(/event: ping\ndata: \{"type":"ping"\}/g)!.length).toBeGreaterThanOrEqual(3);
      expect(anthropic.indexOf("event: ping")).toBeLessThan(anthropic.indexOf('"tool_use"'));
    } finally {
      await proxy.close();
    }
  });
});

describe("caller disconnect", () => {
  // The client's own deadline is 300 s and nothing answers: a drop within the wait's deadline
  // can only be the caller's leaving, passed on — however slow the machine.
  it.each([false, true])("aborts the backend request when the caller leaves (stream %s)", async (stream) => {
    const hold = await holdingBackend();
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: hold.backend.url, think: false }), keepAliveMs: 20 });
    const { url } = await proxy.listen({ port: 0 });
    try {
      for (let i = 0; i < 5; i++) {
        const caller = new AbortController();
        const pending = post(`${url}/v1/chat/completions`, { model: "qwen3:8b", messages: ask, tools: oaTools, stream }, caller.signal).then(async (res) => res.text());
        await hold.waitForArrival(i + 1);
        caller.abort();
        await expect(pending).rejects.toThrow();
        await hold.waitForDrop(i + 1);
      }
      await expect.poll(() => proxy.stats(), { timeout: 30_000 }).toMatchObject({ inFlight: 0, cancelled: 5 });
    } finally {
      await proxy.close();
    }
  });
});

describe("shutdown", () => {
  it("close() ends in-flight requests: a stream gets an error event, a plain request a 503", async () => {
    const hold = await holdingBackend();
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: hold.backend.url, think: false }), keepAliveMs: 20 });
    const { url } = await proxy.listen({ port: 0 });
    const streamed = post(`${url}/v1/messages`, { model: "qwen3:8b", max_tokens: 64, messages: ask, stream: true, tools: [{ name: "get_weather", input_schema: WEATHER_SCHEMA }] });
    const plain = post(`${url}/v1/chat/completions`, { model: "qwen3:8b", messages: ask, tools: oaTools });
    await hold.waitForArrival(2);
    const streamedRes = await streamed; // headers are out: keep-alives started
    await proxy.close();
    const text = await streamedRes.text();
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"Request cancelled: proxy shutting down"/);
    const plainRes = await plain;
    expect(plainRes.status).toBe(503);
    await hold.waitForDrop(2);
    await expect(post(`${url}/v1/chat/completions`, { model: "qwen3:8b", messages: ask })).rejects.toThrow();
  });
});

describe("stats", () => {
  it("count requests, rescues, retries, exhausted, pass-through and latency samples", async () => {
    const rig = await proxyRig(
      [
        { content: "hello" }, // pass-through
        { content: hermes("get_weather", { city: "Oslo" }) }, // rescued
        { toolCalls: [{ name: "nope", args: {} }] }, // retried ...
        { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }, // ... then good
        { content: "no call" }, // a required call missing: retried ...
        { content: "still no call" }, // ... and exhausted (maxRetries 1)
      ],
      { proxy: { maxRetries: 1 } },
    );
    const chat = (body: Record<string, unknown>) => post(`${rig.url}/v1/chat/completions`, { model: "qwen3:8b", messages: ask, ...body });
    await chat({});
    await chat({ tools: oaTools });
    await chat({ tools: oaTools });
    const exhausted = await chat({ tools: oaTools, tool_choice: "required" }).then((r) => r.json() as Promise<{ forge: { exhausted: unknown } }>);
    expect(exhausted.forge.exhausted).toBeDefined();
    const stats = (await (await fetch(`${rig.url}/forge/stats`)).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ requests: 4, guarded: 3, passThrough: 1, rescues: 1, retries: 2, exhausted: 1, failed: 0, inFlight: 0 });
    expect((stats.addedLatencyMs as { samples: number; p50: number; p99: number }).samples).toBe(4);
    expect((stats.addedLatencyMs as { p50: number }).p50).toBeGreaterThan(0);
  });
});

describe("injected respond tool", () => {
  it("the backend sees respond; the caller gets its message as plain text", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "respond", args: { message: "It is cold." } }] }], { proxy: { injectRespondTool: true } });
    const res = (await (await post(`${rig.url}/v1/chat/completions`, { model: "qwen3:8b", messages: ask, tools: oaTools })).json()) as {
      choices: { message: { content: string; tool_calls?: unknown }; finish_reason: string }[];
    };
    expect(res.choices[0]!.message.content).toBe("It is cold.");
    expect(res.choices[0]!.message.tool_calls).toBeUndefined();
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(rig.chats()[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["get_weather", "respond"]);
  });
});
