/**
 * A tool's `redact` names never reach a visualizer page or `forge-ts runs show` unmasked: the wire
 * serializer masks at the source, the feed again on ingest, the server's stored-run views (replay,
 * waiting requests) and `runs show` from the map the run carries.
 */
import type { InspectionEvent } from "xstate";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { showMain } from "../../src/cli/runs-show.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { toolCallsResponse } from "../../src/core/llm.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { Feed } from "../../visualizer/feed.js";
import type { WireEvent } from "../../visualizer/protocol.js";
import { createVisualizer } from "../../visualizer/server.js";
import { wireSerializer } from "../../visualizer/wire.js";

const SECRET = "hunter2";

function secretWorkflow() {
  const login = defineTool({
    name: "login",
    description: "Log in",
    parameters: z.object({ user: z.string(), password: z.string() }),
    redact: ["password"],
    execute: (args) => `welcome ${args.user}`,
  });
  const approve = defineTool({ name: "pay", description: "Pay", parameters: z.object({ card: z.string() }), redact: ["card"], needsApproval: true, execute: () => "paid" });
  const answer = defineTool({ name: "answer", description: "Answer", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
  return new Workflow({ name: "secret", description: "logs in", tools: { login, pay: approve, answer }, terminalTool: "answer" });
}

const responses = () => [
  toolCallsResponse([{ tool: "login", args: { user: "ann", password: SECRET }, id: "c1" }]),
  toolCallsResponse([{ tool: "answer", args: { text: "done" }, id: "c2" }]),
];

async function storedRun(store: MemoryRunStore, runId: string, options: { redactStoredLogs?: boolean; inspect?: (e: InspectionEvent) => void } = {}) {
  const runner = new WorkflowRunner({ client: new ScriptedClient({ responses: responses(), stream: false }), contextManager: new ContextManager({ budgetTokens: 100_000 }), store, ...options });
  await runner.run(secretWorkflow(), "log in", { runId });
}

afterEach(() => vi.restoreAllMocks());

describe("visualizer redaction", () => {
  it("the wire serializer masks snapshots and emitted events of a live run", async () => {
    const serialize = wireSerializer();
    const wire: WireEvent[] = [];
    await storedRun(new MemoryRunStore(), "live-1", { inspect: (e) => wire.push(...serialize(e)) });
    const json = JSON.stringify(wire);
    expect(json).not.toContain(SECRET);
    const toolStart = wire.find((e) => e.type === "@xstate.action" && e.action.event.type === "tool.start");
    expect(toolStart).toMatchObject({ action: { event: { tool: "login", args: { user: "ann", password: "[redacted]" } } } });
  });

  it("the feed masks what an unmasking sender ingests", () => {
    const feed = new Feed();
    const base = { runId: "r1", sessionId: "s", rootId: "s", at: 1 };
    const context = { run: { id: "r1", workflow: "secret", redact: { login: ["password"] } }, messages: [{ role: "assistant", content: "", toolCalls: [{ name: "login", args: { password: SECRET }, callId: "c1" }] }] };
    feed.ingest([
      { ...base, type: "@xstate.snapshot", event: { type: "x" }, snapshot: { value: "inferring", status: "active", context } },
      { ...base, type: "@xstate.action", action: { type: "xstate.emit", event: { type: "tool.start", tool: "login", args: { password: SECRET }, callId: "c1", index: 0 } } },
      { ...base, type: "forge.chunk", chunk: { type: "tool_call_delta", content: `{"password":"${SECRET}"}`, index: 0 } },
    ]);
    const json = JSON.stringify(feed.since("r1").events);
    expect(json).not.toContain(SECRET);
    expect(json).toContain("[redacted]");
  });

  it("a stored run's replay view is masked, and a masked log is refused as not replayable", async () => {
    const store = new MemoryRunStore();
    await storedRun(store, "plain");
    await storedRun(store, "masked", { redactStoredLogs: true });
    const viz = createVisualizer({ store, workflows: [secretWorkflow()] });
    const plain = await viz.fetch(new Request("http://viz/api/runs/plain/replay"));
    expect(plain.status).toBe(200);
    const body = await plain.text();
    expect(body).toContain("[redacted]");
    expect(body).not.toContain(SECRET);
    const masked = await viz.fetch(new Request("http://viz/api/runs/masked/replay"));
    expect(masked.status).toBe(422);
    expect(await masked.json()).toMatchObject({ error: { code: "not_replayable" } });
  });
});

describe("forge-ts runs show", () => {
  it("prints the checkpoint, requests and event log with the run's redact names masked", async () => {
    const store = new MemoryRunStore();
    await storedRun(store, "shown");
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));
    const checkpoint = (await store.latest("shown"))!;
    await showMain(store, checkpoint, { json: true, events: true }, {});
    await showMain(store, checkpoint, { events: true }, {});
    const out = lines.join("\n");
    expect(out).not.toContain(SECRET);
    expect(out).toContain("[redacted]");
    // The store itself is untouched: only the report is masked.
    expect(JSON.stringify(checkpoint.snapshot)).toContain(SECRET);
  });

  it("masks a waiting run's pending requests", async () => {
    const store = new MemoryRunStore();
    const runner = new WorkflowRunner({
      client: new ScriptedClient({ responses: [toolCallsResponse([{ tool: "pay", args: { card: "4111-1111" }, id: "p1" }])], stream: false }),
      contextManager: new ContextManager({ budgetTokens: 100_000 }),
      store,
    });
    await expect(runner.start(secretWorkflow(), "pay", { runId: "waits" })).resolves.toMatchObject({ status: "waiting" });
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));
    await showMain(store, (await store.latest("waits"))!, {}, {});
    expect(lines.join("\n")).toContain(`{"card":"[redacted]"}`);
    expect(lines.join("\n")).not.toContain("4111-1111");
  });
});
