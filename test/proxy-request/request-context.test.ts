import { describe, expect, it } from "vitest";
import type { LLMResponse } from "../../src/core/llm.js";
import { createMessage, MessageType } from "../../src/core/messages.js";
import type { ProxyRequest } from "../../src/proxy-request/proxy-request.js";
import { parsePolicy } from "../../src/proxy-request/request-policy.js";
import { createProxyContext, type ProxyContext, type ProxyGuardrailOptions } from "../../src/proxy-request/request-context.js";
import { assess, checkFormat, enforcePolicy } from "../../src/proxy-request/verdict.js";
import { isBudgetSpent, isPolicyBlock, recordAnswer, recordExhausted, recordPolicyFailure, recordResponse, recordRetry } from "../../src/proxy-request/request-actions.js";

const WEATHER = { name: "get_weather", description: "", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const SEARCH = { name: "search", description: "", parameters: { type: "object", properties: { q: { type: "string" } } } };
const OPTIONS: ProxyGuardrailOptions = { maxRetries: 2, maxToolErrors: 1, rescueEnabled: true, injectRespondTool: false };

function request(extra: Partial<ProxyRequest> = {}): ProxyRequest {
  return {
    model: "m",
    messages: [createMessage("user", "weather in Paris?", MessageType.USER_INPUT)],
    tools: [WEATHER, SEARCH],
    toolChoice: undefined,
    stream: false,
    includeUsage: false,
    body: {},
    ...extra,
  };
}

function answered(response: LLMResponse, extra: Partial<ProxyRequest> = {}, options: Partial<ProxyGuardrailOptions> = {}): ProxyContext {
  const ctx = createProxyContext({ requestId: "r1", request: request(extra), options: { ...OPTIONS, ...options } });
  return { ...ctx, ...recordResponse(ctx, response) };
}

const call = (tool: string, args: unknown, id?: string): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args, ...(id ? { id } : {}) }] });

describe("proxy request context", () => {
  it("is unguarded without tools or with tool_choice none, and passes the answer through", () => {
    for (const extra of [{ tools: [] }, { toolChoice: "none" as const }]) {
      const ctx = answered(call("nope", "not json"), extra);
      expect(ctx.guarded).toBe(false);
      expect(assess(ctx)).toEqual({ kind: "answer", rescued: false, answer: { type: "tool_calls", calls: [{ id: "call_r1_1_0", name: "nope", args: "not json" }] } });
    }
  });

  it("accepts plain text as the answer when the caller allows it (tool_choice auto)", () => {
    expect(assess(answered({ type: "text", content: "Sunny.", reasoning: "easy" }))).toEqual({
      kind: "answer",
      rescued: false,
      answer: { type: "text", content: "Sunny.", reasoning: "easy" },
    });
  });

  it.each([
    ["tool_choice required", { toolChoice: "required" as const }, {}],
    ["a forced tool", { toolChoice: { type: "function" as const, function: { name: "get_weather" } } }, {}],
    ["an injected respond tool", {}, { injectRespondTool: true }],
  ])("retries plain text on the user channel with %s", (_, extra, options) => {
    const v = assess(answered({ type: "text", content: "Sunny." }, extra, options));
    expect(v.kind).toBe("retry");
    if (v.kind !== "retry") return;
    expect(v.budget).toBe("retries");
    expect(v.appended.map((m) => [m.role, m.meta.type])).toEqual([
      ["assistant", "text_response"],
      ["user", "retry_nudge"],
    ]);
  });

  it("retries text that is a broken call attempt even when text is allowed", () => {
    const v = assess(answered({ type: "text", content: '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>' }));
    expect(v.kind).toBe("retry");
  });

  it("rescues a text-format call into a validated call", () => {
    const v = assess(answered({ type: "text", content: '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}' }));
    expect(v).toEqual({ kind: "answer", rescued: true, rescue: "mistral", answer: { type: "tool_calls", calls: [{ id: "call_r1_1_0", name: "get_weather", args: { city: "Paris" } }] } });
  });

  it("counts a client-side rescue", () => {
    const v = assess(answered({ ...call("get_weather", { city: "Paris" }, "c9"), rescued: true } as LLMResponse));
    expect(v).toMatchObject({ kind: "answer", rescued: true, answer: { calls: [{ id: "c9" }] } });
  });

  it("answers an unknown tool on the tool channel against the retry budget", () => {
    const v = assess(answered(call("get_forecast", {}, "c1")));
    expect(v.kind).toBe("retry");
    if (v.kind !== "retry") return;
    expect(v.budget).toBe("retries");
    expect(v.appended[0]).toMatchObject({ role: "assistant", toolCalls: [{ name: "get_forecast", callId: "c1" }] });
    expect(v.appended[1]).toMatchObject({ role: "tool", toolCallId: "c1" });
    expect(v.appended[1]!.content).toMatch(/^\[UnknownTool\]/);
  });

  it("answers schema-invalid args against the tool-error budget, naming the field", () => {
    const v = assess(answered(call("get_weather", { city: 5 })));
    expect(v).toMatchObject({ kind: "retry", budget: "toolErrors" });
    if (v.kind === "retry") expect(v.lastError).toContain("city");
  });

  it("rejects a call to another tool than the forced one", () => {
    const v = assess(answered(call("search", { q: "x" }), { toolChoice: { type: "function", function: { name: "get_weather" } } }));
    expect(v).toMatchObject({ kind: "retry", budget: "retries" });
  });

  it("turns a respond call into text, and drops it beside real calls", () => {
    const only = assess(answered(call("respond", { message: "Hello!" }), {}, { injectRespondTool: true }));
    expect(only).toMatchObject({ kind: "answer", answer: { type: "text", content: "Hello!" } });
    const mixed: LLMResponse = { type: "tool_calls", toolCalls: [{ tool: "respond", args: { message: "x" } }, { tool: "search", args: { q: "y" } }] };
    expect(assess(answered(mixed, {}, { injectRespondTool: true }))).toMatchObject({ answer: { type: "tool_calls", calls: [{ name: "search" }] } });
  });

  it("does not inject respond when the caller already has one or forces a tool", () => {
    const own = { name: "respond", description: "", parameters: { type: "object" } };
    expect(createProxyContext({ requestId: "r", request: request({ tools: [own] }), options: { ...OPTIONS, injectRespondTool: true } }).tools).toHaveLength(1);
    const forced = request({ toolChoice: { type: "function", function: { name: "search" } } });
    expect(createProxyContext({ requestId: "r", request: forced, options: { ...OPTIONS, injectRespondTool: true } }).respondInjected).toBe(false);
  });

  it("counts failures per budget, spends them, and returns the last answer marked exhausted, without calls to tools never offered", () => {
    let ctx = answered(call("get_forecast", {}));
    ctx = { ...ctx, verdict: assess(ctx) };
    expect(isBudgetSpent(ctx)).toBe(false);
    ctx = { ...ctx, ...recordRetry(ctx) };
    expect(ctx.counters).toEqual({ retries: 1, toolErrors: 0, premature: 0, prereq: 0 });
    expect(ctx.messages).toHaveLength(3);
    ctx = { ...ctx, ...recordResponse(ctx, call("get_forecast", {})) };
    ctx = { ...ctx, verdict: assess(ctx) };
    ctx = { ...ctx, ...recordRetry(ctx) };
    ctx = { ...ctx, ...recordResponse(ctx, call("get_forecast", { day: 1 })) };
    ctx = { ...ctx, verdict: assess(ctx) };
    expect(isBudgetSpent(ctx)).toBe(true);
    const done = recordExhausted(ctx);
    expect(done.answer).toEqual({ type: "text", content: "" });
    expect(done.exhausted).toMatchObject({ reason: "retries", attempts: 3, dropped: { unoffered: 1, unofferedNames: ["get_forecast"], overLimit: 0 } });
    expect(done.exhausted!.lastError).toMatch(/UnknownTool/);
  });

  it("sums usage over attempts and records the accepted answer", () => {
    let ctx = answered({ type: "text", content: "a", usage: { inputTokens: 10, outputTokens: 2 } });
    ctx = { ...ctx, ...recordResponse(ctx, { type: "text", content: "b", usage: { inputTokens: 12, outputTokens: 3 } }) };
    expect(ctx.usage).toEqual({ inputTokens: 22, outputTokens: 5 });
    ctx = { ...ctx, verdict: assess(ctx) };
    expect(recordAnswer(ctx)).toEqual({ answer: { type: "text", content: "b" }, rescued: false });
  });

  it("enforcePolicy blocks a premature terminal call on the tool channel, against its own budget, failing closed", () => {
    const policy = parsePolicy({ requiredSteps: ["get_weather"], terminalTool: "search", maxPrematureAttempts: 0 });
    let ctx = answered(call("search", { q: "x" }, "c1"), {}, { policy });
    ctx = { ...ctx, verdict: assess(ctx) };
    const v = enforcePolicy({ ...ctx });
    expect(v).toMatchObject({ kind: "retry", budget: "premature", blocked: "step" });
    if (v.kind !== "retry") return;
    expect(v.appended.map((m) => [m.role, m.toolCallId ?? m.toolCalls?.[0]?.callId])).toEqual([["assistant", "c1"], ["tool", "c1"]]);
    ctx = { ...ctx, verdict: v };
    expect(isBudgetSpent(ctx) && isPolicyBlock(ctx)).toBe(true);
    expect(recordPolicyFailure(ctx).error).toMatchObject({ statusCode: 422, message: expect.stringMatching(/forge policy/) });
  });

  it("checkFormat answers with the JSON alone, or retries with a user-channel nudge", () => {
    const format = { kind: "json_object" as const };
    let ctx = answered({ type: "text", content: 'Here: {"a": 1}' }, { tools: [], format });
    ctx = { ...ctx, verdict: assess(ctx) };
    expect(checkFormat(ctx)).toEqual({ kind: "answer", rescued: false, answer: { type: "text", content: '{"a": 1}' } });
    let bad = answered({ type: "text", content: "no" }, { tools: [], format });
    bad = { ...bad, verdict: assess(bad) };
    expect(checkFormat(bad)).toMatchObject({ kind: "retry", budget: "retries", blocked: "format", appended: [{ role: "assistant" }, { role: "user", meta: { type: "retry_nudge" } }] });
  });
});
