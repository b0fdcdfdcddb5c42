/**
 * The contract every HTTP client passes against its own loopback fake server (Hono's router
 * contract idea): same cases, backend-specific wire rendering supplied by the target.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { LLMClient, StreamChunk, Usage } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import type { ToolSpec } from "../../src/core/tool.js";
import { resetConnection, startFakeServer, stallBeforeHeaders, type FakeHandler, type FakeServer } from "./support/fake-server.js";
import type { ModelReply } from "./support/wire.js";

export type HttpClient = LLMClient & {
  streamRetries: number;
  lastUsage: Usage | undefined;
  sendStream: NonNullable<LLMClient["sendStream"]>;
};

export interface ContractTarget {
  name: string;
  makeClient(serverUrl: string, options: { timeoutMs?: number }): HttpClient;
  /** Write the whole reply, streamed or not as the request asked. */
  reply(res: ServerResponse, reply: ModelReply, stream: boolean): void;
  /** A stream with a line/event that is not JSON. */
  malformed(res: ServerResponse): void;
  /** A stream that closes cleanly before its end marker. */
  truncated(res: ServerResponse): void;
  /** Headers and one text delta, then silence. */
  stallMidStream(res: ServerResponse): void;
}

export const TOOLS: ToolSpec[] = [
  {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
  { name: "answer", description: "Final answer", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
];

export const MESSAGES: WireMessage[] = [
  { role: "system", content: "You help with weather." },
  { role: "user", content: "Weather in Paris?" },
];

const CALL_REPLY: ModelReply = { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }], usage: { input: 20, output: 5 } };
const TEXT_REPLY: ModelReply = { content: "It is sunny in Paris today.", usage: { input: 20, output: 9 } };

export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

export function clientContract(target: ContractTarget): void {
  describe(`${target.name} — LLMClient contract`, () => {
    let server: FakeServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });
    const serve = async (handler: FakeHandler) => {
      server = await startFakeServer(handler);
      return server;
    };
    const replying = (reply: ModelReply): FakeHandler => (req, res) => target.reply(res, reply, req.body?.stream === true);

    it("send → tool_calls", async () => {
      const s = await serve(replying(CALL_REPLY));
      const client = target.makeClient(s.url, {});
      const response = await client.send(MESSAGES, TOOLS);
      expect(response).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] });
      expect(client.lastUsage).toEqual({ inputTokens: 20, outputTokens: 5 });
    });

    it("send → text", async () => {
      const s = await serve(replying(TEXT_REPLY));
      const response = await target.makeClient(s.url, {}).send(MESSAGES, TOOLS);
      expect(response).toMatchObject({ type: "text", content: "It is sunny in Paris today." });
    });

    for (const [label, reply] of [["tool call", CALL_REPLY], ["text", TEXT_REPLY]] as const) {
      it(`stream (${label}): deltas, then one FINAL equal to send's response`, async () => {
        const s = await serve(replying(reply));
        const client = target.makeClient(s.url, {});
        const sent = await client.send(MESSAGES, TOOLS);
        const chunks = await collect(client.sendStream(MESSAGES, TOOLS));
        const finals = chunks.filter((c) => c.type === "final");
        expect(finals).toHaveLength(1);
        expect(chunks.at(-1)?.type).toBe("final");
        expect(chunks.filter((c) => c.type === "text_delta" || c.type === "tool_call_delta").length).toBeGreaterThan(0);
        expect(finals[0]).toEqual({ type: "final", response: sent });
        expect(client.streamRetries).toBe(0);
      });
    }

    it("malformed stream → RETRY chunk, one re-request, then success", async () => {
      const s = await serve((_req, res, n) => (n === 0 ? target.malformed(res) : target.reply(res, TEXT_REPLY, true)));
      const client = target.makeClient(s.url, {});
      const chunks = await collect(client.sendStream(MESSAGES, TOOLS));
      const retryAt = chunks.findIndex((c) => c.type === "retry");
      expect(retryAt).toBeGreaterThanOrEqual(0);
      expect(chunks.filter((c) => c.type === "retry")).toHaveLength(1);
      expect(chunks.at(-1)).toMatchObject({ type: "final", response: { type: "text", content: "It is sunny in Paris today." } });
      expect(client.streamRetries).toBe(1);
      expect(s.requests).toHaveLength(2);
    });

    it("stream that never reaches FINAL → StreamError after the one re-request", async () => {
      const s = await serve((_req, res) => target.truncated(res));
      const client = target.makeClient(s.url, {});
      const chunks: StreamChunk[] = [];
      await expect(
        (async () => {
          for await (const c of client.sendStream(MESSAGES, TOOLS)) chunks.push(c);
        })(),
      ).rejects.toMatchObject({ name: "StreamError", code: "FORGE_STREAM" });
      expect(chunks.filter((c) => c.type === "retry")).toHaveLength(1);
      expect(chunks.some((c) => c.type === "final")).toBe(false);
      expect(s.requests).toHaveLength(2);
    });

    // The stall lasts until the client's own deadline (minutes): an AbortError, not a timeout, is the abort's doing.
    it("abort mid-stream rejects with AbortError", async () => {
      const s = await serve((_req, res) => target.stallMidStream(res));
      const controller = new AbortController();
      const iterator = target.makeClient(s.url, {}).sendStream(MESSAGES, TOOLS, { signal: controller.signal })[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.value).toMatchObject({ type: "text_delta" });
      const pending = iterator.next();
      controller.abort();
      await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    });

    it("abort while waiting for headers rejects send with AbortError", async () => {
      const s = await serve((_req, res) => stallBeforeHeaders(res));
      const controller = new AbortController();
      const pending = target.makeClient(s.url, {}).send(MESSAGES, TOOLS, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    });

    it("HTTP 500 → BackendError(500, body)", async () => {
      const s = await serve((_req, res) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("model runner crashed");
      });
      await expect(target.makeClient(s.url, {}).send(MESSAGES, TOOLS)).rejects.toMatchObject({
        code: "FORGE_BACKEND",
        statusCode: 500,
        body: "model runner crashed",
      });
      expect(s.requests).toHaveLength(1);
    });

    it("connection reset → BackendError(0) for send and stream, no client retry", async () => {
      const s = await serve((_req, res) => resetConnection(res));
      const client = target.makeClient(s.url, {});
      await expect(client.send(MESSAGES, TOOLS)).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: 0 });
      await expect(collect(client.sendStream(MESSAGES, TOOLS))).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: 0 });
      expect(s.requests).toHaveLength(2);
    });

    it("stalled answer with a short timeout → BackendError(408) (headers and mid-body)", async () => {
      const s = await serve((req, res) => (req.body?.stream ? target.stallMidStream(res) : stallBeforeHeaders(res)));
      const client = target.makeClient(s.url, { timeoutMs: 200 });
      await expect(client.send(MESSAGES, TOOLS)).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: 408 });
      await expect(collect(client.sendStream(MESSAGES, TOOLS))).rejects.toMatchObject({ code: "FORGE_BACKEND", statusCode: 408 });
      expect(client.streamRetries).toBe(0);
    });
  });
}
