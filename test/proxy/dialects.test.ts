import { describe, expect, it } from "vitest";
import { BackendError, StreamError } from "../../src/core/errors.js";
import { parseMessagesRequest } from "../../src/proxy/anthropic-request.js";
import { AnthropicStreamEncoder } from "../../src/proxy/anthropic-response.js";
import { errorRecord, HttpError, toHttpError } from "../../src/proxy-request/http-error.js";
import { parseChatCompletionRequest } from "../../src/proxy/openai-request.js";
import { percentile } from "../../src/proxy/proxy-stats.js";
import { parseJsonObject } from "../../src/proxy/request-body.js";
import { pieces } from "../../src/proxy/sse-frames.js";

const bad = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error("expected an HttpError");
};

describe("OpenAI request parsing", () => {
  it("converts history with tool calls and results, keeps unknown fields for the backend", () => {
    const req = parseChatCompletionRequest({
      model: "qwen3:8b",
      temperature: 0.2,
      chat_template_kwargs: { enable_thinking: false },
      messages: [
        { role: "developer", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get", arguments: '{"x":1}' } }] },
        { role: "tool", tool_call_id: "c1", content: "42" },
      ],
      tools: [{ type: "function", function: { name: "get" } }],
      tool_choice: "required",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(req.messages.map((m) => [m.role, m.meta.type, m.content])).toEqual([
      ["system", "system_prompt", "be brief"],
      ["user", "user_input", "a\nb"],
      ["assistant", "tool_call", ""],
      ["tool", "tool_result", "42"],
    ]);
    expect(req.messages[2]!.toolCalls).toEqual([{ name: "get", args: { x: 1 }, callId: "c1" }]);
    expect(req.messages[3]).toMatchObject({ toolCallId: "c1", toolName: "get" });
    expect(req.tools).toEqual([{ name: "get", description: "", parameters: { type: "object", properties: {} } }]);
    expect(req).toMatchObject({ toolChoice: "required", stream: true, includeUsage: true, body: { temperature: 0.2, chat_template_kwargs: { enable_thinking: false } } });
  });

  it.each([
    [{ messages: [] }, /messages: at least one message/],
    [{}, /messages/],
    [{ messages: [{ role: "user", content: "x" }], stream: "yes" }, /^stream:/],
    [{ messages: [{ role: "wizard", content: "x" }] }, /messages\[0\]/],
    [{ messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] }, /messages\[0\]\.content\[0\]\.text: a "text" part needs a string text/],
    [{ messages: [{ role: "user", content: ["x"] }] }, /messages\[0\]\.content/],
    [{ messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: {} }] }, /tools\[0\]\.function\.name/],
    [{ messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "a" } }], tool_choice: { type: "function", function: { name: "b" } } }, /not in tools/],
    [{ messages: [{ role: "user", content: "x" }], n: 2 }, /n: only n = 1/],
  ])("rejects %j with a 400 naming the field", (body, message) => {
    const error = bad(() => parseChatCompletionRequest(body as Record<string, unknown>));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(message);
  });
});

describe("Anthropic request parsing", () => {
  it("converts system, tool_use and tool_result blocks and maps sampling to OpenAI names", () => {
    const req = parseMessagesRequest({
      model: "claude-x",
      max_tokens: 100,
      system: [{ type: "text", text: "sys" }],
      temperature: 0.5,
      stop_sequences: ["END"],
      tool_choice: { type: "any" },
      tools: [{ name: "get", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "text", text: "ok" }, { type: "tool_use", id: "t1", name: "get", input: { a: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "res" }] }, { type: "text", text: "thanks" }] },
      ],
    });
    expect(req.messages.map((m) => [m.role, m.meta.type, m.content])).toEqual([
      ["system", "system_prompt", "sys"],
      ["user", "user_input", "hi"],
      ["assistant", "tool_call", "ok"],
      ["tool", "tool_result", "res"],
      ["user", "user_input", "thanks"],
    ]);
    expect(req).toMatchObject({ toolChoice: "required", includeUsage: true, body: { max_tokens: 100, temperature: 0.5, stop: ["END"] } });
  });

  it.each([
    [{ messages: [{ role: "user", content: "x" }] }, /max_tokens/],
    [{ max_tokens: 5, messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "x", input: {} }] }] }, /content\[0\]: "tool_use" blocks belong in assistant messages/],
    [{ max_tokens: 5, messages: [{ role: "tool", content: "x" }] }, /messages\[0\]\.role/],
    [{ max_tokens: 5, messages: [{ role: "user", content: "x" }], tools: [{ name: "x" }] }, /tools\[0\]\.input_schema: custom tools need an input_schema/],
    [{ max_tokens: 5, messages: [{ role: "user", content: "x" }], tools: [{ name: "x", input_schema: "{}" }] }, /tools\[0\]\.input_schema: input_schema must be a JSON Schema object/],
    [{ max_tokens: 5, messages: [{ role: "assistant", content: [{ type: "tool_use", name: "x" }] }] }, /messages\[0\]\.content\[0\]\.id/],
  ])("rejects %j with a 400", (body, message) => {
    expect(bad(() => parseMessagesRequest(body as Record<string, unknown>)).message).toMatch(message);
  });
});

describe("request bodies", () => {
  it("refuses non-JSON, non-objects and hostile nesting with 400s", () => {
    expect(bad(() => parseJsonObject("{")).message).toMatch(/not valid JSON/);
    expect(bad(() => parseJsonObject("[1]")).message).toMatch(/JSON object/);
    const deep = `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    expect(bad(() => parseJsonObject(deep)).message).toMatch(/nested deeper/);
  });
});

describe("errors to HTTP", () => {
  it.each([
    [new BackendError(0, "", "connection refused"), 502, "api_error"],
    [new BackendError(408, "", "timed out"), 504, "timeout_error"],
    [new BackendError(500, "boom"), 502, "api_error"],
    [new BackendError(404, "model not found"), 404, "not_found_error"],
    [new BackendError(400, "context too long"), 400, "invalid_request_error"],
    [new BackendError(401, "bad key"), 502, "api_error"],
    [new StreamError("cut"), 502, "api_error"],
    [new TypeError("bug"), 502, "api_error"],
  ])("%s → %i %s", (error, status, type) => {
    const http = toHttpError(errorRecord(error));
    expect([http.status, http.type]).toEqual([status, type]);
  });

  it("renders each dialect's own error shape", () => {
    const e = new HttpError(401, "authentication_error", "Invalid API key");
    expect(e.body("openai")).toEqual({ error: { type: "authentication_error", message: "Invalid API key", param: null, code: null } });
    expect(e.body("anthropic")).toEqual({ type: "error", error: { type: "authentication_error", message: "Invalid API key" } });
  });
});

describe("stream helpers", () => {
  it("cuts text without splitting surrogate pairs", () => {
    const text = "a😀b😀c".repeat(3);
    for (let size = 1; size < 6; size++) {
      const parts = pieces(text, size);
      expect(parts.join("")).toBe(text);
      for (const p of parts) expect(p).not.toMatch(/[\ud800-\udbff]$/);
    }
  });

  it("opens and closes Anthropic content blocks as live channels switch", () => {
    const enc = new AnthropicStreamEncoder({ id: "msg_1", created: 0, model: "m", guarded: false, includeUsage: true });
    const types = [...enc.open(), ...enc.delta("reasoning", "t"), ...enc.delta("content", "a"), ...enc.delta("content", "b")].map((f) => ("event" in f ? f.event : "comment"));
    expect(types).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "content_block_start", "content_block_delta", "content_block_delta"]);
  });

  it("percentile is nearest-rank", () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 99)).toBe(5);
    expect(percentile([], 50)).toBeNull();
  });
});
