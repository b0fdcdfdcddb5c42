import { describe, expect, it } from "vitest";
import { ContextManager } from "../../src/context/context-manager.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import type { HumanRequest } from "../../src/loop/human.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../../src/runner.js";

const EXPECTED = { quote_id: "Q-PN-4471-250", part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 250, unit_price: 0.34 };

async function runDemo(profile: "clean" | "small-model" | "chaotic", seed: number, stream = false, person?: WorkflowRunnerOptions["onHumanRequest"]) {
  const { workflow, oracle, userInput, promptVars } = supplierQuoteWorkflow(person ? { approvalAboveUsd: 50 } : {});
  const client = new SimulatedClient({ oracle, workflow, profile, seed });
  const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }), stream, ...(person ? { onHumanRequest: person } : {}) });
  try {
    const result = await runner.run(workflow, userInput, { promptVars });
    return { ok: true as const, quote: JSON.parse(String(result)) as Record<string, unknown>, client };
  } catch (error) {
    return { ok: false as const, error, client };
  }
}

describe("the demo workflow on the real runner", () => {
  it("clean: finishes with the correct quote in the ideal 4 LLM calls", async () => {
    const run = await runDemo("clean", 1);
    expect(run.ok ? run.quote : run.error).toMatchObject(EXPECTED);
    expect(run.client.calls).toBe(4);
  });

  it("small-model, seeds 1..20: most runs recover from the injected faults and quote correctly", async () => {
    const runs = [];
    for (let seed = 1; seed <= 20; seed++) runs.push(await runDemo("small-model", seed));
    const correct = runs.filter((r) => r.ok && r.quote.unit_price === EXPECTED.unit_price);
    expect(runs.flatMap((r) => r.client.injected).filter((k) => k !== "reasoning").length).toBeGreaterThan(3); // faults did happen
    expect(correct.length).toBeGreaterThanOrEqual(17);
    for (const r of runs) if (r.ok) expect(r.quote).toMatchObject(EXPECTED); // a finished run is never wrong
  });

  it("a run is reproducible for a seed, whatever call ids the runner mints", async () => {
    for (const seed of [4, 5, 6]) {
      const [a, b] = [await runDemo("chaotic", seed), await runDemo("chaotic", seed)];
      expect(b.client.injected).toEqual(a.client.injected);
      expect(b.client.calls).toBe(a.client.calls);
      expect(b.ok ? b.quote : String(b.error)).toEqual(a.ok ? a.quote : String(a.error));
    }
  });

  it("with an approval limit the quote waits for a person: approved, it is submitted; declined, it never is", async () => {
    const asked: HumanRequest[] = [];
    const approved = await runDemo("clean", 1, false, (r) => (asked.push(r), { type: "approve" }));
    expect(approved.ok ? approved.quote : approved.error).toMatchObject(EXPECTED);
    expect(asked).toMatchObject([{ tool: "submit_quote", kind: "approval", args: { quantity: 250, unit_price: 0.34 } }]);
    // Declined: the model says so in text instead of re-sending; with no terminal call the run fails typed.
    const declined = await runDemo("clean", 1, false, () => ({ type: "reject", reason: "not this week" }));
    expect(declined.ok).toBe(false);
    expect(declined.client.log.at(-1)?.step).toEqual({ text: expect.stringContaining("the approver declined it") });
  });

  it("streaming gives the same outcome as send for a seed", async () => {
    for (const seed of [2, 3]) {
      const [sent, streamed] = [await runDemo("small-model", seed), await runDemo("small-model", seed, true)];
      expect(streamed.ok).toBe(sent.ok);
      expect(streamed.client.injected).toEqual(sent.client.injected);
    }
  });
});
