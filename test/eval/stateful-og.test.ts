import { describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { clientFactory, type ClientFactory } from "../../eval/backends.js";
import { runScenario, type RunConfig } from "../../eval/harness.js";
import { playOracle } from "../../eval/oracle-play.js";
import type { RunRecord } from "../../eval/run-record.js";
import type { EvalScenario, ScenarioInstance, Slip, TerminalCall } from "../../eval/scenario.js";
import { ALL_SCENARIOS } from "../../eval/scenarios/index.js";
import { rememberingOracle, Seen, slippingOracle } from "../../eval/scenarios/oracle-kit.js";
import { STATEFUL_OG } from "../../eval/scenarios/stateful-og.js";
import { fieldOf, mentionsAll, mentionsAny, noTextReplyYet, UNREAD } from "../../eval/scenarios/stateful-og-kit.js";
import { STATEFUL_VARIANTS } from "../../eval/scenarios/stateful-variant.js";
import { SimulatedClient } from "../../src/clients/simulated.js";

/** forge's name → ideal iterations, max iterations and tags of its stateful variant. */
const FORGE: Record<string, { ideal: number; max: number; tags: string[] }> = {
  basic_2step_stateful: { ideal: 2, max: 15, tags: ["stateful", "plumbing"] },
  sequential_3step_stateful: { ideal: 3, max: 15, tags: ["stateful", "plumbing"] },
  error_recovery_stateful: { ideal: 3, max: 15, tags: ["stateful", "plumbing"] },
  tool_selection_stateful: { ideal: 3, max: 15, tags: ["stateful", "model_quality"] },
  argument_fidelity_stateful: { ideal: 3, max: 15, tags: ["stateful", "model_quality"] },
  sequential_reasoning_stateful: { ideal: 4, max: 15, tags: ["stateful", "model_quality"] },
  relevance_detection_stateful: { ideal: 1, max: 5, tags: ["stateful", "model_quality"] },
  conditional_routing_stateful: { ideal: 4, max: 15, tags: ["stateful", "model_quality", "reasoning"] },
  data_gap_recovery_stateful: { ideal: 5, max: 15, tags: ["stateful", "model_quality", "reasoning"] },
};

/**
 * Where each slip leads when forced on. `wrong`: a terminal call `validate` rejects, under
 * reforged too. `recovers`: reforged's nudges bring the run back to a correct answer, bare
 * fails. `detour`: a wasted call, the answer still right. `caughtBy` (for the run that ended
 * on the wrong terminal call): whether the answer, the state, or both give it away.
 */
type Expectation = { outcome: "wrong" | "recovers" | "detour"; caughtBy?: "answer" | "state" | "both" };
const SLIPS: Record<string, Record<string, Expectation>> = {
  basic_2step_stateful: {
    answers_before_lookup: { outcome: "recovers", caughtBy: "state" },
    question_as_country: { outcome: "wrong", caughtBy: "state" },
    decoy_country: { outcome: "wrong", caughtBy: "answer" },
  },
  sequential_3step_stateful: {
    reports_before_analysis: { outcome: "recovers", caughtBy: "both" },
    two_digit_year: { outcome: "wrong", caughtBy: "both" },
  },
  error_recovery_stateful: {
    gives_up_after_error: { outcome: "recovers" },
    pads_wrong_side: { outcome: "wrong", caughtBy: "state" },
  },
  tool_selection_stateful: {
    name_as_user_id: { outcome: "wrong", caughtBy: "both" },
    decoy_user: { outcome: "wrong", caughtBy: "both" },
    detours_through_search: { outcome: "detour" },
  },
  argument_fidelity_stateful: {
    decoy_entity: { outcome: "wrong", caughtBy: "both" },
    id_without_prefix: { outcome: "wrong", caughtBy: "both" },
  },
  sequential_reasoning_stateful: {
    recommends_before_interactions: { outcome: "recovers", caughtBy: "both" },
    checks_the_diagnosis: { outcome: "wrong", caughtBy: "both" },
    decoy_patient: { outcome: "wrong", caughtBy: "both" },
  },
  relevance_detection_stateful: {
    answers_in_text: { outcome: "recovers" },
    tries_a_travel_tool: { outcome: "wrong", caughtBy: "state" },
  },
  conditional_routing_stateful: {
    diagnoses_from_the_alert: { outcome: "recovers", caughtBy: "both" },
    skips_the_deployment: { outcome: "wrong", caughtBy: "both" },
    decoy_service: { outcome: "wrong", caughtBy: "both" },
  },
  data_gap_recovery_stateful: {
    writes_profile_as_text: { outcome: "recovers" },
    stops_at_dead_end: { outcome: "wrong", caughtBy: "both" },
    decoy_employee: { outcome: "wrong", caughtBy: "both" },
  },
};

/** One run on the clean simulated model with exactly `slips` active; its state and terminal call kept. */
interface ForcedRun {
  record: RunRecord;
  state: unknown;
  terminal: TerminalCall | undefined;
}

async function forced(s: EvalScenario, slips: Slip[], ablation: "reforged" | "bare"): Promise<ForcedRun> {
  let instance: ScenarioInstance | undefined;
  let client: SimulatedClient | undefined;
  const makeClient: ClientFactory = async (req) => {
    instance = req.instance;
    client = new SimulatedClient({
      oracle: rememberingOracle(slippingOracle(req.scenario.oracle, slips)),
      workflow: req.instance.workflow,
      profile: "clean",
      seed: req.seed,
      usage: true,
    });
    return client;
  };
  const config: RunConfig = { backend: "sim", model: "clean", ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 1, makeClient };
  const record = await runScenario(s, config, 0);
  const last = client!.log.at(-1)?.response;
  const call = last?.type === "tool_calls" ? last.toolCalls.find((c) => instance!.workflow.isTerminal(c.tool)) : undefined;
  const terminal = record.completed && call ? { tool: call.tool, args: call.args as Record<string, unknown>, state: instance!.state } : undefined;
  return { record, state: instance!.state, terminal };
}

describe("stateful OG scenarios", () => {
  it("are forge's nine, with its ideal iterations, limits and tags, where the wrapper's were", () => {
    expect(STATEFUL_OG.map((s) => s.name)).toEqual(Object.keys(FORGE));
    for (const s of STATEFUL_OG) {
      expect([s.idealIterations, s.maxIterations, s.tags], s.name).toEqual([FORGE[s.name]!.ideal, FORGE[s.name]!.max, FORGE[s.name]!.tags]);
    }
    // The first stateful scenarios of the suite, as the wrapped variants were; the wrapper keeps only our compaction ones.
    const first = ALL_SCENARIOS.findIndex((x) => x.tags.includes("stateful"));
    expect(ALL_SCENARIOS.slice(first, first + STATEFUL_OG.length)).toEqual(STATEFUL_OG);
    expect(STATEFUL_VARIANTS.map((s) => s.name)).toEqual(["compaction_stress_stateful", "phase2_compaction_stateful"]);
  });

  for (const s of STATEFUL_OG) {
    it(`${s.name}: the oracle's path validates on the clean simulated model, state included`, async () => {
      const play = await playOracle(s);
      expect([play.valid, play.turns]).toEqual([true, s.idealIterations]);
      const make = clientFactory({ backend: "sim", model: "clean" });
      const config = (ablation: string): RunConfig => ({ backend: "sim", model: "clean", ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 1, makeClient: make });
      expect(await runScenario(s, config("reforged"), 0)).toMatchObject({ correct: true, iterations: s.idealIterations });
      const bare = await runScenario(s, config("bare"), 0);
      if (s.name === "error_recovery_stateful") {
        // The count's format is learnt only from the error, and bare ends a run on its first tool error.
        expect(bare).toMatchObject({ correct: false, errorType: "ToolExecutionError" });
      } else {
        expect(bare).toMatchObject({ correct: true, iterations: s.idealIterations });
      }
      // The same answer against a state no tool touched is rejected: the state is checked, not only the answer.
      const fresh = s.build().state;
      if (s.name !== "relevance_detection_stateful") expect(s.validate({ ...play.terminal, state: fresh })).toBe(false);
    });

    it(`${s.name}: has 1 to 3 slips, each with a stated outcome`, () => {
      const names = (s.slips ?? []).map((x) => x.name);
      expect(names.length).toBeGreaterThanOrEqual(1);
      expect(names.length).toBeLessThanOrEqual(3);
      expect(names.sort()).toEqual(Object.keys(SLIPS[s.name]!).sort());
      for (const slip of s.slips ?? []) expect(slip.rate > 0 && slip.rate <= 1, slip.name).toBe(true);
    });

    for (const slip of s.slips ?? []) {
      it(`${s.name}: ${slip.name}, forced on, leads where it says`, async () => {
        const want = SLIPS[s.name]![slip.name]!;
        const reforged = await forced(s, [slip], "reforged");
        const bare = await forced(s, [slip], "bare");
        if (want.outcome === "wrong") {
          expect(reforged.record).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
          expect(bare.record.correct).toBe(false);
        } else if (want.outcome === "recovers") {
          expect(reforged.record.correct).toBe(true);
          expect(reforged.record.iterations).toBeGreaterThan(s.idealIterations);
          expect(bare.record.correct).toBe(false);
        } else {
          for (const r of [reforged, bare]) expect(r.record).toMatchObject({ correct: true, iterations: s.idealIterations + 1 });
        }
        if (want.caughtBy) {
          const wrong = want.outcome === "wrong" ? reforged.terminal : bare.terminal;
          const right = (await forced(s, [], "reforged")).terminal;
          expect(wrong && right, "both runs ended on a terminal call").toBeTruthy();
          expect(s.validate(wrong!)).toBe(false);
          // Which half of validate rejects it: the answer against the right state, the right answer against this state.
          const answerPasses = s.validate({ ...wrong!, state: right!.state });
          const statePasses = s.validate({ ...right!, state: wrong!.state });
          expect({ answerPasses, statePasses }).toEqual({ answerPasses: want.caughtBy === "state", statePasses: want.caughtBy === "answer" });
        }
      });
    }
  }

  it("decoy records are on file and a wrong id finds them silently, not as an error", async () => {
    const decoy = await forced(STATEFUL_OG.find((s) => s.name === "tool_selection_stateful")!, [slipOf("tool_selection_stateful", "decoy_user")], "reforged");
    expect(decoy.state).toMatchObject({ lookedUp: "bob", permissionsFetched: ["read"] });
    expect(decoy.record.toolErrors).toBe(0);
    const patient = await forced(STATEFUL_OG.find((s) => s.name === "sequential_reasoning_stateful")!, [slipOf("sequential_reasoning_stateful", "decoy_patient")], "reforged");
    expect(patient.state).toMatchObject({ identified: "PT-4215", recordsFetched: "PT-4215", interactionsChecked: "metformin" });
    const service = await forced(STATEFUL_OG.find((s) => s.name === "conditional_routing_stateful")!, [slipOf("conditional_routing_stateful", "decoy_service")], "reforged");
    expect(service.state).toMatchObject({ alertChecked: "auth-service", deploymentChecked: "auth-service" });
  });

  it("error_recovery_stateful: 1000 records fetched passes a text check for '10' but not the state", () => {
    const s = STATEFUL_OG.find((x) => x.name === "error_recovery_stateful")!;
    const args = { content: "Fetched 1000 records as requested." };
    expect(s.validate({ tool: "summarize", args, state: { fetchedCount: 1000 } })).toBe(false);
    expect(s.validate({ tool: "summarize", args: { content: "Fetched 10 records." }, state: { fetchedCount: 10 } })).toBe(true);
  });

  it("conditional_routing_stateful: the service name is read the way people write it", async () => {
    const s = STATEFUL_OG.find((x) => x.name === "conditional_routing_stateful")!;
    const { workflow, state } = s.build();
    const ctx = { signal: new AbortController().signal, idempotencyKey: "k", runId: "r", iteration: 1, callIndex: 0 };
    for (const service of ["payments", "the payments service", "Payments-Service", "payments service"]) {
      expect(String(await workflow.getTool("get_alert").execute({ service }, ctx))).toMatch(/P1-8842/);
    }
    expect(String(await workflow.getTool("get_alert").execute({ service: "billing" }, ctx))).toMatch(/No alert data/);
    expect(state).toMatchObject({ alertChecked: "payments-service" });
  });
});

describe("stateful OG kit", () => {
  const result = (tool: string, content: string, isError = false) => ({ tool, args: {}, content, isError });

  it("fieldOf reads the latest answered `Label: value` line, and says unknown for a miss", () => {
    const seen = new Seen([result("t", "Capital: Rome"), result("t", "Capital: Paris\nOther: x"), result("t", "[ToolError] boom", true)]);
    expect(fieldOf(seen, "t", "capital")).toBe("Paris");
    expect(fieldOf(new Seen([result("t", 'Nothing on file for "x".')]), "t", "Capital")).toBe(UNREAD);
  });

  it("mentions checks are case-insensitive, ignore thousands commas and refuse non-strings", () => {
    expect(mentionsAll("Widget Pro sold 1,500 units", ["widget pro", "1500"])).toBe(true);
    expect(mentionsAll("Widget Pro", ["widget pro", "1500"])).toBe(false);
    expect(mentionsAny(undefined, ["x"])).toBe(false);
    expect(mentionsAny("Roll back now", ["rollback", "roll back"])).toBe(true);
  });

  it("noTextReplyYet turns false once a turn went without a tool result", () => {
    const view = (turn: number, n: number) => ({ results: Array.from({ length: n }, () => result("t", "ok")), userInput: "", toolNames: [], turn });
    expect(noTextReplyYet(view(0, 0))).toBe(true);
    expect(noTextReplyYet(view(2, 2))).toBe(true);
    expect(noTextReplyYet(view(1, 0))).toBe(false);
    expect(noTextReplyYet(view(3, 2))).toBe(false);
  });
});

function slipOf(scenario: string, name: string): Slip {
  const slip = STATEFUL_OG.find((s) => s.name === scenario)?.slips?.find((x) => x.name === name);
  if (!slip) throw new Error(`no slip ${name} in ${scenario}`);
  return slip;
}
