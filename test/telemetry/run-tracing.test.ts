/**
 * Run tracing with the real OpenTelemetry SDK (BasicTracerProvider + InMemorySpanExporter):
 * the span tree of a run with a rescued call and a retry nudge, content only on opt-in and
 * redacted, links from a resumed attempt to the first, and nothing recorded (or thrown) when no
 * provider is registered.
 */
import { context, diag, DiagLogLevel, SpanKind, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { textResponse, toolCallsResponse } from "../../src/core/llm.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { installTracing, parentOf, resetTracing, StackContextManager } from "../support/otel.js";

afterEach(() => resetTracing());

const seen: { span?: string }[] = [];
const lookup = defineTool({
  name: "lookup",
  description: "Look a user up",
  parameters: z.object({ user: z.string(), password: z.string() }),
  redact: ["password"],
  execute: async ({ user }) => {
    seen.push({ span: trace.getSpan(context.active())?.spanContext().spanId });
    return `${user} is an admin`;
  },
});
const answer = defineTool({ name: "answer", description: "Answer", parameters: z.object({ text: z.string() }), execute: async ({ text }) => text });
const workflow = new Workflow({ name: "support", tools: { lookup, answer }, terminalTool: "answer", systemPromptTemplate: "Help." });

/** Native call with a secret, bare text (retry nudge), then an answer the validator rescues from text. */
function script() {
  return new ScriptedClient({
    responses: [
      toolCallsResponse([{ tool: "lookup", args: { user: "ann", password: "s3cret" }, id: "c1" }], { usage: { inputTokens: 10, outputTokens: 5 } }),
      textResponse("Let me think about it."),
      textResponse('<tool_call>\n{"name": "answer", "arguments": {"text": "ann is an admin"}}\n</tool_call>', { usage: { inputTokens: 30, outputTokens: 7 } }),
    ],
  });
}

const runner = (extra: Partial<ConstructorParameters<typeof WorkflowRunner>[0]> = {}) =>
  new WorkflowRunner({ client: script(), contextManager: new ContextManager({ budgetTokens: 8192 }), ...extra });

describe("run tracing", () => {
  it("a run with a rescued call and a retry nudge is one trace: invoke_agent over chat and execute_tool spans, interventions as events", async () => {
    const t = installTracing();
    context.setGlobalContextManager(new StackContextManager());
    seen.length = 0;
    expect(await runner().run(workflow, "Is ann an admin?", { runId: "r1", sessionId: undefined })).toBe("ann is an admin");
    const spans = t.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const run = t.one("invoke_agent support");
    expect(parentOf(run)).toBe("");
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.instrumentationScope.name).toBe("forge-ts");
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "support",
      "gen_ai.provider.name": "scripted",
      "forge.run.id": "r1",
      "forge.run.outcome": "done",
      "forge.machine.state": "done",
      "forge.run.iterations": 3,
    });
    const chats = t.byName("chat scripted").sort((a, b) => (a.attributes["forge.iteration"] as number) - (b.attributes["forge.iteration"] as number));
    expect(chats.map((c) => c.attributes["forge.iteration"])).toEqual([1, 2, 3]);
    for (const c of chats) {
      expect(c.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(c)).toBe(run.spanContext().spanId);
      expect(c.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted", "gen_ai.request.model": "scripted" });
    }
    expect(chats[0]!.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5, "gen_ai.response.finish_reasons": ["tool_calls"] });
    expect(chats[1]!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    expect(chats[1]!.attributes["gen_ai.usage.input_tokens"]).toBeUndefined(); // the backend reported none
    const tools = [t.one("execute_tool lookup"), t.one("execute_tool answer")];
    for (const s of tools) {
      expect(s.kind).toBe(SpanKind.INTERNAL);
      expect(parentOf(s)).toBe(run.spanContext().spanId);
      expect(s.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "forge.tool.status": "ok", "gen_ai.tool.type": "function" });
    }
    expect(tools[0]!.attributes["gen_ai.tool.name"]).toBe("lookup");
    expect(tools[0]!.attributes["gen_ai.tool.call.id"]).toMatch(/./);
    // The tool ran inside its span's context: an instrumented client inside it joins the trace.
    expect(seen).toEqual([{ span: tools[0]!.spanContext().spanId }]);
    const events = run.events.map((e) => [e.name, e.attributes]);
    expect(events).toEqual([
      ["forge.nudge.retry", { "forge.machine.state": expect.any(String), "forge.iteration": 2, "forge.nudge.reason": "retry" }],
      ["forge.rescue", { "forge.machine.state": expect.any(String), "forge.iteration": 3, "forge.rescue.format": "hermes" }],
    ]);
  });

  it("puts no message content on spans by default", async () => {
    const t = installTracing();
    await runner().run(workflow, "Is ann an admin?");
    const all = JSON.stringify(t.spans().map((s) => s.attributes));
    for (const key of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) expect(all).not.toContain(key);
    expect(all).not.toContain("ann");
  });

  it("with recordContent, puts messages, arguments and results on spans, masked per the tool's redact", async () => {
    const t = installTracing();
    await runner({ telemetry: { recordContent: true } }).run(workflow, "Is ann an admin?");
    const all = JSON.stringify(t.spans().map((s) => s.attributes));
    expect(all).not.toContain("s3cret");
    const call = t.one("execute_tool lookup");
    expect(JSON.parse(call.attributes["gen_ai.tool.call.arguments"] as string)).toEqual({ user: "ann", password: "[redacted]" });
    expect(call.attributes["gen_ai.tool.call.result"]).toBe("ann is an admin");
    const chats = t.byName("chat scripted");
    const first = chats.find((c) => c.attributes["forge.iteration"] === 1)!;
    expect(JSON.parse(first.attributes["gen_ai.output.messages"] as string)).toEqual([
      { role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "lookup", arguments: { user: "ann", password: "[redacted]" } }], finish_reason: "tool_calls" },
    ]);
    const second = chats.find((c) => c.attributes["forge.iteration"] === 2)!;
    const input = JSON.parse(second.attributes["gen_ai.input.messages"] as string) as { role: string; parts: { type: string; arguments?: unknown }[] }[];
    expect(input[0]).toEqual({ role: "system", parts: [{ type: "text", content: "Help." }] });
    expect(input.flatMap((m) => m.parts).find((p) => p.type === "tool_call")?.arguments).toEqual({ user: "ann", password: "[redacted]" });
  });

  it("a resumed run's span links to the first attempt's, from a store (retry) and from a snapshot (resume)", async () => {
    const t = installTracing();
    const store = new MemoryRunStore();
    const down = new ScriptedClient({ responses: [toolCallsResponse([{ tool: "lookup", args: { user: "ann", password: "x" }, id: "c1" }])] });
    const first = new WorkflowRunner({ client: down, contextManager: new ContextManager({ budgetTokens: 8192 }), store });
    await expect(first.run(workflow, "Is ann an admin?", { runId: "r-retry" })).rejects.toThrow();
    const failed = t.one("invoke_agent support");
    expect(failed.attributes["forge.run.outcome"]).toBe("failed");
    expect(failed.attributes["error.type"]).toMatch(/./);
    const up = new ScriptedClient({ responses: [toolCallsResponse([{ tool: "answer", args: { text: "yes" }, id: "c2" }])] });
    const second = new WorkflowRunner({ client: up, contextManager: new ContextManager({ budgetTokens: 8192 }), store });
    expect(await second.retry("r-retry", workflow)).toBe("yes");
    const retried = t.byName("invoke_agent support").find((s) => s !== failed)!;
    expect(retried.attributes["forge.run.resumed"]).toBe(true);
    expect(retried.links.map((l) => l.context.spanId)).toEqual([failed.spanContext().spanId]);
    expect(retried.links[0]!.context.traceId).toBe(failed.spanContext().traceId);

    // Without a store: the snapshot a stopped run leaves carries its span, and resume links to it.
    t.exporter.reset();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = defineTool({ name: "lookup", description: "slow", parameters: z.object({ user: z.string(), password: z.string() }), execute: async () => (await gate, "ok") });
    const wf = new Workflow({ name: "support", tools: { lookup: slow, answer }, terminalTool: "answer", systemPromptTemplate: "Help." });
    const a = runner();
    const running = a.run(wf, "Is ann an admin?");
    await new Promise<void>((resolve) => a.actor!.subscribe((s) => s.matches("executingTools") && resolve()));
    a.stop("pause");
    await expect(running).rejects.toThrow(/pause/);
    const snapshot = JSON.parse(JSON.stringify(a.snapshot()));
    release();
    const b = new WorkflowRunner({
      client: new ScriptedClient({ responses: [toolCallsResponse([{ tool: "answer", args: { text: "resumed" }, id: "c9" }])] }),
      contextManager: new ContextManager({ budgetTokens: 8192 }),
    });
    expect(await b.resume(snapshot, wf)).toBe("resumed");
    const [stopped, resumed] = t.byName("invoke_agent support");
    expect(stopped!.attributes["forge.run.outcome"]).toBe("cancelled");
    expect(resumed!.links.map((l) => l.context.spanId)).toEqual([stopped!.spanContext().spanId]);
  });

  it("with no provider registered nothing is recorded and the run works; enabled: false makes no spans at all", async () => {
    const idle = new InMemorySpanExporter();
    // A provider exists but is not registered: the API is a no-op.
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(idle)] });
    expect(await runner().run(workflow, "Is ann an admin?")).toBe("ann is an admin");
    expect(idle.getFinishedSpans()).toEqual([]);
    const t = installTracing();
    expect(await runner({ telemetry: { enabled: false } }).run(workflow, "Is ann an admin?")).toBe("ann is an admin");
    expect(t.spans()).toEqual([]);
  });

  it("an explicit tracerProvider is used instead of the global one", async () => {
    const global = installTracing();
    const own = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] });
    await runner({ telemetry: { tracerProvider: provider } }).run(workflow, "Is ann an admin?");
    expect(global.spans()).toEqual([]);
    expect(own.getFinishedSpans().map((s) => s.name)).toContain("invoke_agent support");
  });

  it("a span processor that throws does not break the run, and is reported on OTel's diag channel", async () => {
    const reported: unknown[][] = [];
    diag.setLogger({ error: (...a: unknown[]) => void reported.push(a), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR);
    const t = installTracing([
      { onStart: () => undefined, onEnd: () => { throw new Error("processor down"); }, forceFlush: async () => {}, shutdown: async () => {} },
    ]);
    expect(await runner().run(workflow, "Is ann an admin?")).toBe("ann is an admin");
    expect(t.byName("invoke_agent support")).toHaveLength(1);
    expect(reported.some((args) => String(args[0]).includes("forge-ts tracing"))).toBe(true);
  });
});
