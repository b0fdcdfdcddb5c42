import { describe, expect, it } from "vitest";
import { z } from "zod";
import { schemaOracle, schemaPlan } from "../../src/clients/schema-oracle.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import type { OracleView } from "../../src/clients/simulated-view.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { SchemaOracleError } from "../../src/core/errors.js";
import { defineTool, type Prerequisite } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { WorkflowRunner } from "../../src/runner.js";
import { schemaOracle as fromTesting } from "../../src/testing.js";

/**
 * A ticket workflow: `reply` (required) needs `read_ticket` for the same ticket id, `read_ticket`
 * needs `login`; `close` (terminal) needs `tag`; `search` is optional and never called.
 */
function ticketWorkflow(log: { tool: string; args: unknown }[] = []) {
  const tool = (name: string, parameters: z.ZodObject, prerequisites: Prerequisite[] = []) =>
    defineTool({ name, description: name, parameters, prerequisites, execute: (args: unknown) => (log.push({ tool: name, args }), { ok: name }) });
  return new Workflow({
    name: "tickets",
    tools: {
      search: tool("search", z.object({ query: z.string() })),
      login: tool("login", z.object({ user: z.email() })),
      read_ticket: tool("read_ticket", z.object({ id: z.string().regex(/^T-\d{3}$/) }), ["login"]),
      reply: tool("reply", z.object({ id: z.string().regex(/^T-\d{3}$/), body: z.string().min(10) }), [{ tool: "read_ticket", args: { id: "$id" } }]),
      tag: tool("tag", z.object({ labels: z.array(z.enum(["bug", "question"])).min(1) })),
      close: tool("close", z.object({ id: z.string().regex(/^T-\d{3}$/), resolution: z.enum(["fixed", "wontfix"]), minutes: z.int().positive() }), ["tag"]),
    },
    requiredSteps: ["reply"],
    terminalTool: "close",
  });
}

const PLAN = [
  { tool: "login", args: { user: "user@example.com" } },
  { tool: "read_ticket", args: { id: "T-000" } },
  { tool: "reply", args: { id: "T-000", body: "bodyxxxxxx" } },
  { tool: "tag", args: { labels: ["bug"] } },
  { tool: "close", args: { id: "T-000", resolution: "fixed", minutes: 1 } },
];

const view = (results: OracleView["results"]): OracleView => ({ results, userInput: "go", toolNames: Object.keys(ticketWorkflow().tools), turn: results.length });
const ok = (tool: string, args: Record<string, unknown>) => ({ tool, args, content: "{}", isError: false });

describe("schemaOracle", () => {
  it("plans each required step after its prerequisites (arg-matched ones with the dependent's values), then the terminal tool after its own", () => {
    expect(schemaPlan(ticketWorkflow())).toEqual(PLAN);
    // Deterministic: another instance of the same workflow, the same calls.
    expect(schemaPlan(ticketWorkflow())).toEqual(schemaPlan(ticketWorkflow()));
    expect(fromTesting).toBe(schemaOracle);
  });

  it("answers the first planned call not yet done, and calls a step again after an error result", () => {
    const oracle = schemaOracle(ticketWorkflow());
    expect(oracle(view([]))).toEqual(PLAN[0]);
    expect(oracle(view([ok("login", PLAN[0]!.args)]))).toEqual(PLAN[1]);
    expect(oracle(view([ok("login", PLAN[0]!.args), { ...ok("read_ticket", PLAN[1]!.args), isError: true, content: "[ToolError] down" }]))).toEqual(PLAN[1]);
    // A call with other args does not meet the plan's (an arg-matched prerequisite would not be met either).
    expect(oracle(view([ok("login", PLAN[0]!.args), ok("read_ticket", { id: "T-999" })]))).toEqual(PLAN[1]);
    expect(oracle(view(PLAN.slice(0, 4).map((c) => ok(c.tool, c.args))))).toEqual(PLAN[4]);
  });

  it("starts over after a terminal success (a session's next turn is a new run)", () => {
    const oracle = schemaOracle(ticketWorkflow());
    expect(oracle(view(PLAN.map((c) => ok(c.tool, c.args))))).toEqual(PLAN[0]);
  });

  it("drives a real run to done with a clean simulated model, prerequisites respected", async () => {
    const log: { tool: string; args: unknown }[] = [];
    const workflow = ticketWorkflow(log);
    const client = new SimulatedClient({ oracle: schemaOracle(workflow), workflow });
    const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }), maxIterations: 10 });
    expect(await runner.run(workflow, "handle ticket T-000")).toEqual({ ok: "close" });
    expect(log).toEqual(PLAN);
  });

  it("fails loud, naming the tool, when an arg-matched prerequisite asks for a value the prerequisite's schema refuses", () => {
    const workflow = new Workflow({
      name: "mismatch",
      tools: {
        load: defineTool({ name: "load", description: "", parameters: z.object({ path: z.string().regex(/^\/.+/) }), execute: () => "" }),
        save: defineTool({ name: "save", description: "", parameters: z.object({ name: z.string() }), prerequisites: [{ tool: "load", args: { path: "$name" } }], execute: () => "" }),
      },
      terminalTool: "save",
    });
    const error = (() => {
      try {
        schemaOracle(workflow);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SchemaOracleError);
    expect(error).toMatchObject({ toolName: "load", keyword: "validation", path: "path" });
    expect((error as Error).message).toContain('the prerequisite of "save"');
  });

  it("fails loud when a tool's own validation refuses what its schema allows (a refinement)", () => {
    const workflow = new Workflow({
      name: "refined",
      tools: { done: defineTool({ name: "done", description: "", parameters: z.object({ code: z.string().refine((s) => s.startsWith("OK")) }), execute: () => "" }) },
      terminalTool: "done",
    });
    expect(() => schemaOracle(workflow)).toThrow(/Tool "done": .*\(validation at code\): the tool's own validation refuses the generated arguments \{"code":"code"\}/);
  });
});
