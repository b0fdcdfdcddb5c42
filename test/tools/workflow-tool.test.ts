/**
 * workflowTool: a workflow called by another workflow's model, as a child run — its result is
 * the tool result, its run is in the store linked to the caller, it gets the caller's remaining
 * budgets, and its failure (or wait for a person) is a tool error the caller's model sees.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ChildWorkflowError, defineTool, ToolDefinitionError, Workflow, type WireMessage } from "../../src/core/index.js";
import type { WorkflowContext } from "../../src/loop/context.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { childRunsOf, parentLinkOf } from "../../src/runner/child-links.js";
import { WorkflowRunner } from "../../src/runner.js";
import { workflowTool } from "../../src/tools/workflow-tool.js";
import { contextManager, plannerWorkflow, researchWorkflow, sharedModel, type Effects } from "./support/workflow-tool-fixtures.js";

const freshStore = () => new FileRunStore({ dir: mkdtempSync(path.join(tmpdir(), "forge-wftool-")) });
const contextOf = async (store: FileRunStore, runId: string) => (await store.latest(runId))!.snapshot.context as WorkflowContext;

describe("workflowTool", () => {
  it("returns the child's result to the caller's model; the child is a stored run linked to its call", async () => {
    const store = freshStore();
    const effects: Effects = { started: [] };
    const planner = plannerWorkflow(researchWorkflow(effects, { lookups: 2 }), effects);
    const runner = new WorkflowRunner({ client: sharedModel({ lookups: 2 }), contextManager: contextManager(), store });

    await expect(runner.run(planner, "plan", { runId: "plan-1" })).resolves.toBe('{"summary":"fact 1 about solar; fact 2 about solar"}');

    const [child, ...more] = await childRunsOf(store, "plan-1");
    expect(more).toEqual([]);
    expect(child).toMatchObject({ runId: "plan-1.1-0", workflow: "research", state: "done", status: "done" });
    const parentCall = (await contextOf(store, "plan-1")).messages.find((m) => m.role === "assistant")?.toolCalls?.[0];
    expect(parentLinkOf(await store.events("plan-1.1-0"))).toEqual({ runId: "plan-1", callId: parentCall?.callId });
    expect(child?.callId).toBe(parentCall?.callId);
    // The child's tools ran under the child's own run id; the parent's events do not hold them.
    expect(effects.started).toEqual(["lookup plan-1.1-0:1:0", "lookup plan-1.1-0:2:0", "report plan-1.1-0:3:0", "answer plan-1:2:0"]);
    expect(parentLinkOf(await store.events("plan-1"))).toBeUndefined();
  });

  it("gives the child the caller's remaining iterations, tokens and wall clock", async () => {
    const store = freshStore();
    const effects: Effects = { started: [] };
    let clock = 1_000_000;
    // The model takes 5 s of the caller's wall clock before it calls research.
    const client = sharedModel({}, (messages) => {
      const planned = messages.some((m) => m.role === "tool");
      if (!planned) clock += 5_000;
      return planned ? { type: "tool_calls", toolCalls: [{ tool: "answer", args: { text: "ok" } }] } : { type: "tool_calls", toolCalls: [{ tool: "research", args: { task: "wind" } }] };
    });
    const planner = plannerWorkflow(researchWorkflow(effects), effects);
    const runner = new WorkflowRunner({ client, contextManager: contextManager(), store, maxIterations: 7, maxTotalTokens: 50_000, maxWallClockMs: 60_000, now: () => clock });
    await runner.run(planner, "plan", { runId: "budgets" });

    const used = (await store.events("budgets")).find((e) => e.type === "response" && e.iteration === 1);
    const tokens = used?.type === "response" ? used.usage.inputTokens + used.usage.outputTokens : NaN;
    const child = await contextOf(store, "budgets.1-0");
    expect(child.run.budget).toMatchObject({ maxIterations: 6, maxTotalTokens: 50_000 - tokens, maxWallClockMs: 55_000 });
  });

  it("a runaway child stops at the caller's remaining iterations; its failure is a tool error the caller recovers from", async () => {
    const store = freshStore();
    const effects: Effects = { started: [] };
    const planner = plannerWorkflow(researchWorkflow(effects, { runaway: true }), effects);
    const runner = new WorkflowRunner({ client: sharedModel({ runaway: true }), contextManager: contextManager(), store, maxIterations: 4 });

    const result = await runner.run(planner, "plan", { runId: "runaway" });
    expect(result).toMatch(/^\[ToolError\] research: workflow "research" \(run runaway\.1-0\) failed: MaxIterationsError: Workflow exceeded 3 iteration/);

    const child = await store.latest("runaway.1-0");
    expect(child).toMatchObject({ state: "failed", status: "failed" });
    expect((child!.snapshot.context as WorkflowContext).error).toMatchObject({ code: "FORGE_MAX_ITERATIONS" });
    expect(effects.started.filter((e) => e.startsWith("lookup"))).toHaveLength(3);
    expect(await store.latest("runaway")).toMatchObject({ state: "done" });
  });

  it("a child waiting for a person is a tool error naming its run; the caller's onHumanRequest answers it instead when given", async () => {
    const effects: Effects = { started: [] };
    const research = researchWorkflow(effects, { approveReport: true });
    const planner = plannerWorkflow(research, effects);
    const store = freshStore();
    const waits = await new WorkflowRunner({ client: sharedModel(), contextManager: contextManager(), store }).run(planner, "plan", { runId: "asks" });
    expect(waits).toMatch(/research: workflow "research" \(run asks\.1-0\) is waiting for a person: approval of report/);
    expect(await store.latest("asks.1-0")).toMatchObject({ status: "waiting" });

    const approved: string[] = [];
    const answered = new WorkflowRunner({
      client: sharedModel(),
      contextManager: contextManager(),
      store,
      onHumanRequest: (request) => (approved.push(request.tool), { type: "approve" }),
    });
    await expect(answered.run(planner, "plan", { runId: "approves" })).resolves.toBe('{"summary":"fact 1 about solar"}');
    expect(approved).toEqual(["report"]);
  });

  it("runs without a store too, and a tool runs at most one child per call", async () => {
    const effects: Effects = { started: [] };
    const research = researchWorkflow(effects);
    await expect(new WorkflowRunner({ client: sharedModel(), contextManager: contextManager() }).run(plannerWorkflow(research, effects), "plan")).resolves.toBe('{"summary":"fact 1 about solar"}');

    const twice = defineTool({
      name: "twice",
      description: "runs research twice",
      parameters: z.object({}),
      execute: async (_args, ctx) => [await ctx.runChild!(research, "a"), await ctx.runChild!(research, "b")],
    });
    const done = defineTool({ name: "done", description: "end", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
    const outer = new Workflow({ name: "outer", tools: { twice, done }, terminalTool: "done" });
    const client = sharedModel({}, (messages: WireMessage[]) => {
      const result = messages.findLast((m) => m.role === "tool");
      return result ? { type: "tool_calls", toolCalls: [{ tool: "done", args: { text: String(result.content) } }] } : { type: "tool_calls", toolCalls: [{ tool: "twice", args: {} }] };
    });
    const result = await new WorkflowRunner({ client, contextManager: contextManager(), store: new MemoryRunStore() }).run(outer, "go");
    expect(result).toMatch(/^\[ToolError\] twice: Invalid runChild: .*already ran a child workflow in this call/);
  });

  it("defines a tool from the workflow: its name and description, a task argument or a schema of its own", () => {
    const effects: Effects = { started: [] };
    const research = researchWorkflow(effects);
    const byDefault = workflowTool(research);
    expect(byDefault.spec).toMatchObject({ name: "research", description: "Research a topic and report what was found.", parameters: { type: "object", required: ["task"] } });
    const custom = workflowTool(research, { name: "dig", input: z.object({ topic: z.string(), depth: z.number() }), toMessage: ({ topic, depth }) => `${topic} x${depth}` });
    expect(custom.spec.parameters).toMatchObject({ required: ["topic", "depth"] });
    expect(() => workflowTool({} as Workflow)).toThrow(ToolDefinitionError);
    expect(() => workflowTool(new Workflow({ ...researchOptions(research), name: "deep research" }))).toThrow(/name must match/);
  });

  it("revives ChildWorkflowError from its JSON form", async () => {
    const { reviveError } = await import("../../src/core/errors.js");
    const error = new ChildWorkflowError("research", "p.1-0", "failed", "MaxIterationsError: ...", "FORGE_MAX_ITERATIONS");
    expect(reviveError(error.toJSON())).toMatchObject({ code: "FORGE_CHILD_WORKFLOW", runId: "p.1-0", reason: "failed", childCode: "FORGE_MAX_ITERATIONS", message: error.message });
  });
});

function researchOptions(w: Workflow) {
  return { name: w.name, tools: { ...w.tools }, requiredSteps: [...w.requiredSteps], terminalTool: [...w.terminalTools] };
}
