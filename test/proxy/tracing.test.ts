/**
 * A proxied request continues the caller's W3C trace: with an SDK and the W3C propagator
 * registered, the proxy's spans land in the trace of the incoming `traceparent`, each backend
 * attempt is a CLIENT span with gen_ai.* attributes, the loopback backend receives a
 * `traceparent` of that same trace, and guardrail interventions are span events. Global OTel
 * registration is undone after each test.
 */
import { propagation, SpanKind, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GenAI } from "../../src/telemetry/tracer.js";
import { hermes, proxyRig, WEATHER_SCHEMA } from "./support/harness.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});

afterEach(async () => {
  trace.disable();
  propagation.disable();
  await provider.shutdown();
});

async function chat(url: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<Response> {
  const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res;
}

/** The server span ends when the response is out; wait for it rather than for a fixed time. */
async function spansOnceEnded(count: number): Promise<ReadableSpan[]> {
  await vi.waitUntil(() => exporter.getFinishedSpans().length >= count, { timeout: 30_000, interval: 5 });
  return exporter.getFinishedSpans();
}

describe("proxy tracing", () => {
  it("continues the incoming traceparent, traces each backend attempt and sends its traceparent on", async () => {
    // An unknown tool first (a nudge), then a call written as text (a rescue).
    const rig = await proxyRig([{ toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }, { content: hermes("get_weather", { city: "Oslo" }) }]);
    const res = await chat(rig.url, { traceparent }, { model: "qwen3:8b", messages: [{ role: "user", content: "Weather in Oslo?" }], tools });
    expect(res.status).toBe(200);

    const spans = await spansOnceEnded(3);
    expect(spans).toHaveLength(3);
    for (const span of spans) expect(span.spanContext().traceId).toBe(TRACE_ID);
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    const attempts = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(server.name).toBe("chat qwen3:8b");
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(server.attributes[GenAI.operationName]).toBe("chat");
    expect(server.attributes[GenAI.inputTokens]).toBe(22);
    expect(server.attributes[GenAI.finishReasons]).toEqual(["tool_calls"]);
    expect(attempts).toHaveLength(2);
    for (const a of attempts) {
      expect(a.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(a.attributes).toMatchObject({ [GenAI.operationName]: "chat", [GenAI.providerName]: "ollama", [GenAI.requestModel]: "qwen3:8b", "forge.backend": "backend", [GenAI.inputTokens]: 11, [GenAI.outputTokens]: 7 });
    }

    // Each backend request carried the traceparent of its own attempt span, in the caller's trace.
    const sent = rig.chats().map((r) => String(r.headers.traceparent));
    expect(new Set(sent)).toEqual(new Set(attempts.map((a) => `00-${TRACE_ID}-${a.spanContext().spanId}-01`)));
    expect(sent).toHaveLength(2);

    const events = server.events.map((e) => e.name);
    expect(events).toEqual(["forge.nudge.unknown_tool", "forge.rescue"]);
    expect(server.events[1]!.attributes).toMatchObject({ "forge.rescue.format": "hermes" });
    // Content is opt-in: none of the caller's text is on any span.
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toContain("Oslo");
    expect(JSON.stringify(server.events)).not.toContain("get_wether");
  });

  it("records policy blocks and a spent budget as events, and content only when asked to", async () => {
    const policy = { requiredSteps: ["get_weather"], terminalTool: "submit" };
    const submit = { type: "function", function: { name: "submit", description: "Finish", parameters: { type: "object", properties: {} } } };
    const rig = await proxyRig(() => ({ toolCalls: [{ name: "submit", args: {} }] }), { proxy: { policy, traceContent: true } });
    const res = await chat(rig.url, { traceparent }, { model: "qwen3:8b", messages: [{ role: "user", content: "Weather in Oslo?" }], tools: [...tools, submit] });
    expect(res.status).toBe(422);
    const spans = await spansOnceEnded(1 + rig.chats().length);
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    const names = server.events.map((e) => e.name);
    expect(names.filter((n) => n === "forge.nudge.step").length).toBe(rig.chats().length - 1);
    expect(names.at(-1)).toBe("forge.budget_exhausted");
    expect(server.events.at(-1)!.attributes).toMatchObject({ "forge.budget": "steps" });
    expect(server.status.code).toBe(2); // ERROR
    expect(server.attributes[GenAI.errorType]).toBe("422");
    // traceContent: the nudge's reason and each attempt's answer are recorded.
    expect(server.events[0]!.attributes?.["forge.nudge.reason"]).toEqual(expect.any(String));
    expect(spans.find((s) => s.kind === SpanKind.CLIENT)!.attributes[GenAI.outputMessages]).toContain("submit");
  });

  it("starts a new trace without an incoming traceparent, and sends none when no propagator is registered", async () => {
    const rig = await proxyRig([{ content: "hello" }, { content: "hello again" }]);
    expect((await chat(rig.url, {}, { model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    const spans = await spansOnceEnded(2);
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(server.parentSpanContext).toBeUndefined();
    expect(rig.chats()[0]!.headers.traceparent).toBe(`00-${server.spanContext().traceId}-${spans.find((s) => s.kind === SpanKind.CLIENT)!.spanContext().spanId}-01`);

    propagation.disable();
    expect((await chat(rig.url, { traceparent }, { model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    expect(rig.chats()[1]!.headers.traceparent).toBeUndefined();
  });
});
