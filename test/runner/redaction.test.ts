/**
 * `redact` and `redactStoredLogs` on a real runner and store: the tool and the model get the real
 * values; the stored log and the checkpoints' reported copies are masked; a run killed midway
 * resumes from the store with the real values; its masked log is refused by replay. And
 * `maxResultChars`: the model sees a cut result, the caller the whole one.
 */
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { toolCallsResponse } from "../../src/core/llm.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { truncationMarker } from "../../src/loop/result-cap.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { replayRun } from "../../src/runner/replay.js";
import { WorkflowRunner } from "../../src/runner.js";

const SECRET = "hunter2";
const contextManager = () => new ContextManager({ budgetTokens: 100_000 });

function secretWorkflow(seen: unknown[] = []) {
  const login = defineTool({
    name: "login",
    description: "Log in",
    parameters: z.object({ user: z.string(), password: z.string() }),
    redact: ["password"],
    execute: (args) => (seen.push(args), `welcome ${args.user}`),
  });
  const answer = defineTool({ name: "answer", description: "Answer", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
  return new Workflow({ name: "secret", description: "logs in", tools: { login, answer }, requiredSteps: ["login"], terminalTool: "answer" });
}

const loginCall = toolCallsResponse([{ tool: "login", args: { user: "ann", password: SECRET }, id: "c1" }]);
const answerCall = toolCallsResponse([{ tool: "answer", args: { text: "done" }, id: "c2" }]);

describe("redactStoredLogs", () => {
  it("masks the log's responses and the checkpoints' reported copies; a killed run resumes with the real values; replay refuses", async () => {
    const store = new MemoryRunStore();
    const seen: unknown[] = [];
    const workflow = secretWorkflow(seen);
    const runId = "secret-1";
    let stopped = false;
    const first: WorkflowRunner = new WorkflowRunner({
      client: new ScriptedClient({ responses: [loginCall] }),
      contextManager: contextManager(),
      store,
      redactStoredLogs: true,
      onStateChange: (state, ctx) => {
        // Killed after login ran, before the model's next answer.
        if (!stopped && state === "inferring" && ctx.steps.completed.length === 1) {
          stopped = true;
          first.stop("simulated crash");
        }
      },
    });
    await expect(first.run(workflow, "log in", { runId })).rejects.toMatchObject({ code: "FORGE_WORKFLOW_CANCELLED" });
    expect(seen).toEqual([{ user: "ann", password: SECRET }]);

    const events = await store.events(runId);
    const response = events.find((e) => e.type === "response");
    expect(response).toMatchObject({ redacted: true, response: { toolCalls: [{ tool: "login", args: { user: "ann", password: "[redacted]" } }] } });
    expect(JSON.stringify(events)).not.toContain(SECRET);
    const stored = (await store.latest(runId))!;
    expect(stored.snapshot.context.lastResponse).toMatchObject({ toolCalls: [{ args: { password: "[redacted]" } }] });
    // What resume continues from keeps the real values: the model's history and the steps.
    expect(stored.snapshot.context.steps.completed).toEqual([{ tool: "login", args: { user: "ann", password: SECRET } }]);

    // A new runner (a restarted process) resumes from the store.
    const client = new ScriptedClient({ responses: [answerCall] });
    const second = new WorkflowRunner({ client, contextManager: contextManager(), store, redactStoredLogs: true });
    await expect(second.resume(runId, workflow)).resolves.toBe("done");
    // The model saw its own call with the real password; login did not run again.
    expect(JSON.stringify(client.requests[0]!.messages)).toContain(SECRET);
    expect(seen).toHaveLength(1);
    expect((await store.latest(runId))!.snapshot.context.terminal).toMatchObject({ tool: "answer", args: { text: "done" } });

    await expect(replayRun(store, runId, workflow)).rejects.toMatchObject({ code: "FORGE_RUN_NOT_REPLAYABLE", runId });
  });

  it("leaves a run replayable when nothing it stored needed masking", async () => {
    const store = new MemoryRunStore();
    const workflow = secretWorkflow();
    const noSecret = toolCallsResponse([{ tool: "answer", args: { text: "done" }, id: "c0" }]);
    const runner = new WorkflowRunner({ client: new ScriptedClient({ responses: [loginCall, noSecret] }), contextManager: contextManager(), store, redactStoredLogs: true });
    await runner.run(workflow, "go", { runId: "r2" });
    const events = await store.events("r2");
    expect(events.filter((e) => e.type === "response").map((e) => "redacted" in e)).toEqual([true, false]);
    // Without the option, the log is stored as it was and replays.
    const plain = new MemoryRunStore();
    await new WorkflowRunner({ client: new ScriptedClient({ responses: [loginCall, answerCall] }), contextManager: contextManager(), store: plain }).run(workflow, "go", { runId: "r3" });
    expect(JSON.stringify(await plain.events("r3"))).toContain(SECRET);
    await expect(replayRun(plain, "r3", workflow)).resolves.toMatchObject({ state: "done", result: "done" });
  });

  it("carries the redaction map in the run, so reports need no workflow", async () => {
    const store = new MemoryRunStore();
    await new WorkflowRunner({ client: new ScriptedClient({ responses: [loginCall, answerCall] }), contextManager: contextManager(), store }).run(secretWorkflow(), "go", { runId: "r4" });
    expect((await store.latest("r4"))!.snapshot.context.run.redact).toEqual({ login: ["password"] });
  });

  it("is validated: a boolean, and only with a store", () => {
    const base = { client: new ScriptedClient({ responses: [] }), contextManager: contextManager() };
    expect(() => new WorkflowRunner({ ...base, redactStoredLogs: true })).toThrow(/redactStoredLogs.*store/);
    expect(() => new WorkflowRunner({ ...base, store: new MemoryRunStore(), redactStoredLogs: "yes" as unknown as boolean })).toThrow(/redactStoredLogs/);
  });
});

describe("maxResultChars", () => {
  const big = "x".repeat(5_000);
  function bigWorkflow(toolCap?: number) {
    const fetchBig = defineTool({ name: "fetch_big", description: "Big", parameters: z.object({}), ...(toolCap ? { maxResultChars: toolCap } : {}), execute: () => big });
    const answer = defineTool({ name: "answer", description: "Answer", parameters: z.object({}), execute: () => big });
    return new Workflow({ name: "big", description: "big results", tools: { fetch_big: fetchBig, answer }, terminalTool: "answer" });
  }
  const calls = () => [toolCallsResponse([{ tool: "fetch_big", args: {}, id: "f" }]), toolCallsResponse([{ tool: "answer", args: {}, id: "a" }])];

  it("cuts what the model sees; the run's result, tool.outcome and the log's toolEnd keep the whole text", async () => {
    const client = new ScriptedClient({ responses: calls() });
    const store = new MemoryRunStore();
    const ends: unknown[] = [];
    const inspect = (e: InspectionEvent) => {
      const emitted = e.type === "@xstate.action" && e.action.type === "xstate.emit" ? (e.action.params as { event?: { type: string } }).event : undefined;
      if (emitted?.type === "tool.outcome") ends.push(emitted);
    };
    const runner = new WorkflowRunner({ client, contextManager: contextManager(), store, maxResultChars: 100, inspect });
    await expect(runner.run(bigWorkflow(), "go", { runId: "big-1" })).resolves.toBe(big);
    const cut = `${"x".repeat(100)}${truncationMarker(4_900, 5_000)}`;
    expect(JSON.stringify(client.requests[1]!.messages)).toContain(cut);
    expect(JSON.stringify(client.requests[1]!.messages)).not.toContain("x".repeat(101));
    expect(ends[0]).toMatchObject({ content: cut, fullContent: big });
    const stored = (await store.events("big-1")).filter((e) => e.type === "toolEnd");
    expect(stored[0]).toMatchObject({ content: cut, fullContent: big });
    await expect(replayRun(store, "big-1", bigWorkflow())).resolves.toMatchObject({ state: "done", result: big });
  });

  it("a tool's own cap wins over the runner's", async () => {
    const client = new ScriptedClient({ responses: calls() });
    await new WorkflowRunner({ client, contextManager: contextManager(), maxResultChars: 100 }).run(bigWorkflow(10), "go");
    expect(JSON.stringify(client.requests[1]!.messages)).toContain(`${"x".repeat(10)}${truncationMarker(4_990, 5_000)}`);
  });

  it("is validated as a positive integer", () => {
    const base = { client: new ScriptedClient({ responses: [] }), contextManager: contextManager() };
    for (const bad of [0, -5, 2.5, "100"]) {
      expect(() => new WorkflowRunner({ ...base, maxResultChars: bad as number })).toThrow(/maxResultChars.*positive integer/);
      expect(() => defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => "", maxResultChars: bad as number })).toThrow(/maxResultChars must be a positive integer/);
    }
  });
});
