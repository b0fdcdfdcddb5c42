/**
 * The record fields the harness fills beyond the runner's stats: the suite generation, a
 * validator that throws (attempted, not validated), and the count of reasoning messages.
 */
import { describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { clientFactory } from "../../eval/backends.js";
import { EVAL_GENERATION } from "../../eval/generation.js";
import { runScenario, type RunConfig } from "../../eval/harness.js";
import { computeMetrics } from "../../eval/metrics.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import type { SimulatedClient } from "../../src/clients/simulated.js";

const one = (name: string) => selectScenarios({ names: [name] })[0]!;

/** A sim config whose clients are kept, to compare the record with what the model did. */
function simConfig(model: "clean" | "small-model", clients: SimulatedClient[] = []): RunConfig {
  const make = clientFactory({ backend: "sim", model });
  return {
    backend: "sim", model, ablation: getAblation("reforged"), compactStrategy: "tiered", stream: false, seed: 42,
    makeClient: async (ctx) => {
      const client = (await make(ctx)) as SimulatedClient;
      clients.push(client);
      return client;
    },
  };
}

describe("harness record fields", () => {
  it("stamps the current generation on every record", async () => {
    const r = await runScenario(one("basic_2step"), simConfig("clean"), 0);
    expect(r).toMatchObject({ generation: EVAL_GENERATION, correct: true, reasoningMessages: 0 });
    expect(r.validationError).toBeUndefined();
  });

  it("a validator that throws: completed, not correct, the error recorded as a validation error", async () => {
    const scenario = { ...one("basic_2step"), validate: (): boolean => { throw new TypeError("cannot read properties of undefined (reading 'total')"); } };
    const r = await runScenario(scenario, simConfig("clean"), 0);
    expect(r).toMatchObject({
      completed: true,
      correct: false,
      validationError: "TypeError: cannot read properties of undefined (reading 'total')",
      errorType: "ValidationError",
      errorMessage: "TypeError: cannot read properties of undefined (reading 'total')",
    });
    const m = computeMetrics([r]);
    expect(m).toMatchObject({ attempted: 1, completed: 1, validated: 0, validationErrors: 1 });
    expect(m.validatedAccuracy).toBeNull();
  });

  it("a validator returning false is a wrong answer, not a validation error", async () => {
    const r = await runScenario({ ...one("basic_2step"), validate: () => false }, simConfig("clean"), 0);
    expect(r).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
    expect(r.validationError).toBeUndefined();
  });

  it("counts the assistant's reasoning messages: one per reasoning response of the small model", async () => {
    const clients: SimulatedClient[] = [];
    const config = simConfig("small-model", clients);
    const records = [];
    for (let i = 0; i < 6; i++) records.push(await runScenario(one("sequential_3step"), config, i));
    const reasoned = clients.map((c) => c.log.filter((t) => t.response.reasoning).length);
    expect(records.map((r) => r.reasoningMessages)).toEqual(reasoned);
    expect(reasoned.some((n) => n > 0)).toBe(true);
    expect(reasoned.some((n) => n === 0)).toBe(true);
  });
});
