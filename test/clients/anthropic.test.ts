import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AnthropicClient } from "../../src/clients/anthropic.js";
import { BackendError, InvalidArgumentError, StreamError } from "../../src/core/errors.js";
import type { StreamChunk } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { loopback } from "../server/helpers.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let handlers: Handler[] = [];
let fake: Awaited<ReturnType<typeof loopback>>;

beforeAll(async () => {
  fake = await loopback((req, res, body) => {
    const next = handlers.shift();
    if (!next) {
      res.writeHead(500);
      res.end("no scripted answer");
      return;
    }
    next(req, res, body);
  });
});
afterAll(() => fake.close());
beforeEach(() => {
  handlers = [];
  fake.requests.length = 0;
});

const client = (extra: Partial<ConstructorParameters<typeof AnthropicClient>[0]> = {}) =>
  new AnthropicClient({ model: "claude-test", apiKey: "test-key", baseURL: fake.url, timeoutMs: 5_000, ...extra });

const weather = { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const history: WireMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Weather in Paris?" },
];

function json(status: number, payload: unknown): Handler {
  return (_req, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
  };
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function toolStreamEvents(): string[] {
  return [
    sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, output_tokens: 1 } } }),
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
    sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Need the " } }),
    sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "weather." } }),
    sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig123" } }),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("ping", { type: "ping" }),
    sse("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_01", name: "get_weather", input: {} } }),
    sse("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } }),
    sse("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"ci' } }),
    sse("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'ty": "Par' } }),
    sse("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'is"}' } }),
    sse("content_block_stop", { type: "content_block_stop", index: 1 }),
    sse("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 42 } }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

function textStreamEvents(text: string[]): string[] {
  return [
    sse("message_start", { type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ...text.map((t) => sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } })),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

/** `resetAfter`: the connection is reset once it settles (the client has read the events), so the reset is mid-body. */
function stream(events: string[], opts: { cut?: number; resetAfter?: Promise<void> } = {}): Handler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const upTo = opts.cut ?? events.length;
    for (const e of events.slice(0, upTo)) res.write(e);
    if (opts.resetAfter) void opts.resetAfter.then(() => res.socket?.destroy());
    else res.end();
  };
}

/** Wait until `check` holds: generous, since the deadline only matters when something is broken. */
const until = (check: () => boolean) => vi.waitUntil(check, { timeout: 30_000, interval: 5 });

async function collect(iter: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const c of iter) out.push(c);
  return out;
}

describe("AnthropicClient.send", () => {
  it("posts a converted Messages request and maps tool_use + usage back", async () => {
    handlers.push(
      json(200, {
        id: "msg_1", type: "message", role: "assistant", model: "claude-test", stop_reason: "tool_use", stop_sequence: null,
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
        ],
        usage: { input_tokens: 30, output_tokens: 12, cache_read_input_tokens: 5 },
      }),
    );
    const c = client({ toolChoice: "any", temperature: 0.2 });
    const response = await c.send(history, [weather]);
    expect(response).toEqual({
      type: "tool_calls",
      toolCalls: [{ tool: "get_weather", args: { city: "Paris" }, id: "toolu_01" }],
      reasoning: "Let me check.",
      usage: { inputTokens: 35, outputTokens: 12 },
    });
    expect(c.lastUsage).toEqual({ inputTokens: 35, outputTokens: 12 });
    const req = fake.requests[0]!;
    expect(req.url).toBe("/v1/messages");
    expect(JSON.parse(req.body)).toEqual({
      model: "claude-test", max_tokens: 4096, system: "Be brief.", temperature: 0.2,
      messages: [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }],
      tools: [{ name: "get_weather", description: "Weather", input_schema: weather.parameters }],
      tool_choice: { type: "any" },
    });
  });

  it("maps text + thinking to a text response with reasoning, and reports 200K context", async () => {
    handlers.push(
      json(200, {
        id: "m", type: "message", role: "assistant", model: "claude-test", stop_reason: "end_turn", stop_sequence: null,
        content: [{ type: "thinking", thinking: "hmm", signature: "s" }, { type: "text", text: "Sunny." }],
        usage: { input_tokens: 3, output_tokens: 4 },
      }),
    );
    const c = client({ thinking: { budgetTokens: 2048 } });
    expect(await c.send(history)).toEqual({ type: "text", content: "Sunny.", reasoning: "hmm", usage: { inputTokens: 3, outputTokens: 4 } });
    expect(JSON.parse(fake.requests[0]!.body).thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(await c.getContextLength()).toBe(200_000);
  });

  it("4xx and 5xx become BackendError with status and body (no SDK retries)", async () => {
    handlers.push(json(400, { type: "error", error: { type: "invalid_request_error", message: "messages: roles must alternate" } }));
    const e400 = await client().send(history).catch((e: unknown) => e);
    expect(e400).toBeInstanceOf(BackendError);
    expect((e400 as BackendError).statusCode).toBe(400);
    expect((e400 as BackendError).body).toContain("roles must alternate");
    handlers.push(json(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
    const e529 = await client().send(history).catch((e: unknown) => e);
    expect((e529 as BackendError).statusCode).toBe(529);
    expect(fake.requests).toHaveLength(2);
  });

  it("a connection reset is BackendError(0)", async () => {
    handlers.push((_req, res) => res.socket?.destroy());
    const error = await client().send(history).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).statusCode).toBe(0);
  });

  it("a backend that never answers hits timeoutMs as BackendError(408)", async () => {
    handlers.push(() => {});
    const error = await client({ timeoutMs: 300 }).send(history).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).statusCode).toBe(408);
  });

  it("abort cancels the HTTP request", async () => {
    let closed = false;
    let arrived!: () => void;
    const atServer = new Promise<void>((resolve) => (arrived = resolve));
    handlers.push((req) => (req.socket.on("close", () => (closed = true)), arrived()));
    const controller = new AbortController();
    // Nothing answers and the deadline is far away: an AbortError and a closed socket are the abort's doing.
    const pending = client({ timeoutMs: 600_000 }).send(history, undefined, { signal: controller.signal });
    await atServer;
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    await until(() => closed);
  });

  it("validates options", () => {
    expect(() => new AnthropicClient({ model: "" })).toThrow(InvalidArgumentError);
    expect(() => client({ thinking: { budgetTokens: 2048 }, toolChoice: "any" })).toThrow(/only "auto"/);
    expect(() => client({ thinking: { budgetTokens: 100 } })).toThrow(/budgetTokens/);
    expect(() => client({ toolChoice: "required" as never })).toThrow(/toolChoice/);
  });
});

describe("AnthropicClient.sendStream", () => {
  it("turns the SSE event sequence into deltas and a FINAL equal to what send returns", async () => {
    handlers.push(stream(toolStreamEvents()));
    const c = client();
    const chunks = await collect(c.sendStream(history, [weather]));
    expect(chunks).toEqual([
      { type: "text_delta", content: "Need the ", channel: "reasoning" },
      { type: "text_delta", content: "weather.", channel: "reasoning" },
      { type: "tool_call_delta", content: "", index: 0, name: "get_weather", id: "toolu_01" },
      { type: "tool_call_delta", content: "", index: 0 },
      { type: "tool_call_delta", content: '{"ci', index: 0 },
      { type: "tool_call_delta", content: 'ty": "Par', index: 0 },
      { type: "tool_call_delta", content: 'is"}', index: 0 },
      {
        type: "final",
        response: { type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" }, id: "toolu_01" }], reasoning: "Need the weather.", usage: { inputTokens: 25, outputTokens: 42 } },
      },
    ]);
    expect(c.lastUsage).toEqual({ inputTokens: 25, outputTokens: 42 });
    expect(JSON.parse(fake.requests[0]!.body).stream).toBe(true);

    // The captured signed thinking block is replayed before its tool_use on the next turn.
    handlers.push(stream(textStreamEvents(["Sunny", " in Paris."])));
    const next: WireMessage[] = [
      ...history,
      { role: "assistant", content: "", tool_calls: [{ id: "toolu_01", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", content: "20C", tool_call_id: "toolu_01" },
    ];
    const text = await collect(c.sendStream(next, [weather]));
    expect(text.at(-1)).toEqual({ type: "final", response: { type: "text", content: "Sunny in Paris.", usage: { inputTokens: 10, outputTokens: 7 } } });
    expect(JSON.parse(fake.requests[1]!.body).messages[1].content[0]).toEqual({ type: "thinking", thinking: "Need the weather.", signature: "sig123" });
  });

  it("a truncated stream is re-requested once with a RETRY chunk first", async () => {
    handlers.push(stream(textStreamEvents(["Hel", "lo"]), { cut: 3 }), stream(textStreamEvents(["Hello"])));
    const c = client();
    const chunks = await collect(c.sendStream(history));
    expect(chunks.map((ch) => ch.type)).toEqual(["text_delta", "retry", "text_delta", "final"]);
    expect(chunks[1]).toEqual({ type: "retry", reason: "Anthropic stream ended without message_stop" });
    expect(c.streamRetries).toBe(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("a stream that stays truncated raises StreamError after one retry", async () => {
    handlers.push(stream(textStreamEvents(["a"]), { cut: 2 }), stream(textStreamEvents(["a"]), { cut: 2 }));
    const chunks: StreamChunk[] = [];
    const error = await (async () => {
      for await (const ch of client().sendStream(history)) chunks.push(ch);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamError);
    expect(chunks.filter((c) => c.type === "retry")).toHaveLength(1);
    expect(chunks.some((c) => c.type === "final")).toBe(false);
  });

  it("a connection reset mid-stream and malformed JSON are stream faults (retried)", async () => {
    let read!: () => void;
    const firstDelta = new Promise<void>((resolve) => (read = resolve));
    handlers.push(stream(textStreamEvents(["x"]), { cut: 3, resetAfter: firstDelta }), (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("event: message_start\ndata: {not json\n\n");
    });
    const error = await (async () => {
      for await (const chunk of client().sendStream(history)) if (chunk.type === "text_delta") read();
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamError);
    expect(fake.requests).toHaveLength(2);
  });

  it("HTTP errors before the stream and error events are BackendError, not retried", async () => {
    handlers.push(json(500, { type: "error", error: { type: "api_error", message: "boom" } }));
    const e500 = await collect(client().sendStream(history)).catch((e: unknown) => e);
    expect((e500 as BackendError).statusCode).toBe(500);
    handlers.push((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(sse("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
    });
    const overloaded = await collect(client().sendStream(history)).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(BackendError);
    expect((overloaded as BackendError).statusCode).toBe(529);
    expect(fake.requests).toHaveLength(2);
  });

  it("abort mid-stream ends with AbortError, not a retry", async () => {
    let closed = false;
    handlers.push((req, res) => {
      req.socket.on("close", () => (closed = true));
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const e of textStreamEvents(["partial"]).slice(0, 3)) res.write(e);
    });
    const controller = new AbortController();
    const chunks: StreamChunk[] = [];
    const error = await (async () => {
      for await (const ch of client().sendStream(history, undefined, { signal: controller.signal })) {
        chunks.push(ch);
        if (ch.type === "text_delta") controller.abort();
      }
    })().catch((e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(chunks.some((c) => c.type === "retry")).toBe(false);
    expect(fake.requests).toHaveLength(1);
    await until(() => closed);
  });
});
