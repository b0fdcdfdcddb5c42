/**
 * Untyped errors from tools: results with no JSON form become a tool error fed back to the
 * model (or, for the terminal tool, a typed ToolResultError), thrown values that refuse to be
 * stringified are still fed back, and the snapshot stays JSON-safe throughout.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import { defineTool, ToolResultError, Workflow, type Message } from "../../src/core/index.js";
import { WorkflowRunner } from "../../src/runner.js";
import { loopWorkflow, PolicyClient, scriptThenCorrect } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };

function circular() {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}

const hostile = {
  bigint: () => ({ n: 10n }),
  circular,
  "throwing toJSON": () => ({
    toJSON() {
      throw new Error("no JSON for you");
    },
  }),
  function: () => () => 1,
};

/** loopWorkflow with `tool` (fetch_a or finish) returning `result()` the first time it runs. */
function returning(tool: "fetch_a" | "finish", result: () => unknown) {
  const { workflow, log } = loopWorkflow();
  let first = true;
  const original = workflow.tools[tool]!;
  const replaced = defineTool({
    name: tool,
    description: original.description,
    parameters: z.object({ mode: z.string().optional(), n: z.number().optional(), summary: z.string().optional() }),
    execute: (args, ctx) => {
      if (first) {
        first = false;
        return result();
      }
      return original.execute(args as never, ctx);
    },
    prerequisites: [...original.prerequisites],
  });
  const wf = new Workflow({ ...workflow, tools: { ...workflow.tools, [tool]: replaced }, requiredSteps: [...workflow.requiredSteps], terminalTool: "finish" });
  return { workflow: wf, log };
}

function runner(messages: Message[] = []) {
  return new WorkflowRunner({
    client: new PolicyClient(scriptThenCorrect([])),
    contextManager: new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 }),
    onMessage: (m) => messages.push(m),
  });
}

describe("tool results with no JSON form", () => {
  it.each(Object.entries(hostile))("%s from a step: fed back as a tool error, counted, and the run recovers", async (_name, make) => {
    const { workflow } = returning("fetch_a", make);
    const messages: Message[] = [];
    const r = runner(messages);
    await expect(r.run(workflow, "go", vars)).resolves.toEqual({ done: "all done" });
    const fed = messages.find((m) => m.content.startsWith("[ToolError]"));
    expect(fed?.content).toMatch(/fetch_a.*not JSON-serializable/);
    expect(r.lastRunStats?.toolErrors).toBe(1);
    expect(() => JSON.stringify(r.snapshot())).not.toThrow();
  });

  it.each(Object.entries(hostile))("%s from the terminal tool: the run fails with ToolResultError, snapshot still JSON", async (_name, make) => {
    const { workflow } = returning("finish", make);
    const r = runner();
    const error = await r.run(workflow, "go", vars).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolResultError);
    expect(error).toMatchObject({ code: "FORGE_TOOL_RESULT", toolName: "finish", terminal: true });
    expect(r.lastRunStats?.outcome).toBe("failed");
    const snap = JSON.parse(JSON.stringify(r.snapshot())) as { value: unknown; context: { error: { code: string } } };
    expect(snap.value).toBe("failed");
    expect(snap.context.error.code).toBe("FORGE_TOOL_RESULT");
  });

  it("the terminal result is committed in its JSON form: run() and resume() return the same value", async () => {
    const when = new Date(Date.UTC(2026, 0, 2));
    const { workflow } = returning("finish", () => ({ when, skip: undefined }));
    const r = runner();
    const result = await r.run(workflow, "go", vars);
    expect(result).toEqual({ when: when.toISOString() });
    const snap = JSON.parse(JSON.stringify(r.snapshot()));
    await expect(runner().resume(snap, workflow)).resolves.toEqual(result);
  });
});

describe("thrown values that refuse to be stringified", () => {
  it.each<[string, () => unknown]>([
    ["an object whose toString throws", () => ({ toString: () => { throw new Error("nope"); } })],
    ["Object.create(null)", () => Object.create(null)],
    ["an Error whose message getter throws", () => Object.defineProperty(new Error("x"), "message", { get: () => { throw new Error("nope"); } })],
    ["a symbol", () => Symbol("s")],
  ])("%s is fed back as a tool error", async (_name, make) => {
    const { workflow } = returning("fetch_a", () => {
      throw make();
    });
    const messages: Message[] = [];
    const r = runner(messages);
    await expect(r.run(workflow, "go", vars)).resolves.toEqual({ done: "all done" });
    expect(messages.find((m) => m.content.startsWith("[ToolError] fetch_a:"))).toBeDefined();
  });
});
