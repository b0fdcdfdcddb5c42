/**
 * The facts the workflow machine emits: each intervention and each step of a run once, in
 * order, from the actions themselves (what the log, the trace and the metrics read).
 */
import { describe, expect, it } from "vitest";
import { WorkflowRunner } from "../../src/runner.js";
import { batchTools, rescueFact, type WorkflowFact } from "../../src/loop/facts.js";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import { call, loopWorkflow, PolicyClient, scriptThenCorrect, text } from "../support/loop-fixtures.js";

const fenced = (tool: string, args: object) => text(`Calling it.\n\`\`\`json\n${JSON.stringify({ tool, args })}\n\`\`\``);

describe("workflow facts", () => {
  it("a run emits each fact once, in order: responses, rescues, nudges by kind, tool starts and outcomes", async () => {
    const { workflow } = loopWorkflow();
    const script = [
      text("Let me think."), // bare text: a retry nudge
      fenced("fetch_a", { n: 1 }), // rescued, executed
      call("finish", { summary: "early" }), // premature terminal: a step nudge
      call("fetch_b", { n: 2 }), // correct
      call("finish", { summary: "done" }),
    ];
    const runner = new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect(script)), contextManager: new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 }) });
    const facts: WorkflowFact[] = [];
    const running = runner.run(workflow, "go", { promptVars: { company: "Acme" } });
    runner.actor!.on("*", (f) => facts.push(f));
    await expect(running).resolves.toEqual({ done: "done" });
    const shown = facts
      .filter((f) => f.type !== "history.message")
      .map((f) => (f.type === "guardrail.nudge" ? `nudge:${f.kind}:${f.reason}:${f.tools.join("+")}` : f.type === "guardrail.rescue" ? `rescue:${f.format}` : "tool" in f ? `${f.type}:${f.tool}` : f.type));
    expect(shown).toEqual([
      "llm.response", "nudge:retry:retry:",
      "llm.response", "rescue:fenced_json", "tool.start:fetch_a", "tool.outcome:fetch_a",
      "llm.response", "nudge:step:premature_terminal:finish",
      "llm.response", "tool.start:fetch_b", "tool.outcome:fetch_b",
      "llm.response", "tool.start:finish", "tool.outcome:finish",
    ]);
    const responses = facts.filter((f) => f.type === "llm.response");
    expect(responses.map((f) => f.iteration)).toEqual([1, 2, 3, 4, 5]);
    // totals are the run's running sums of each call's usage
    const last = responses.at(-1)!;
    const sum = responses.reduce((n, f) => n + f.usage.inputTokens, 0);
    expect(last.totals.inputTokens).toBe(sum);
    expect(runner.snapshot().context.usage).toEqual(last.totals);
  });

  it("rescueFact reports a rescue only, with its format; batchTools dedupes in call order", () => {
    expect(rescueFact({ kind: "calls", calls: [], rescued: true, rescueFormat: "hermes" }, 3)).toEqual([{ type: "guardrail.rescue", iteration: 3, format: "hermes" }]);
    expect(rescueFact({ kind: "calls", calls: [], rescued: false }, 3)).toEqual([]);
    expect(rescueFact({ kind: "retry", nudge: { role: "user", content: "x", kind: "retry" } as never, raw: "" }, 3)).toEqual([]);
    expect(rescueFact(undefined, 3)).toEqual([]);
    expect(batchTools([{ tool: "b" }, { tool: "a" }, { tool: "b" }])).toEqual(["b", "a"]);
  });
});
