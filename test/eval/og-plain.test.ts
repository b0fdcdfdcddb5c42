/**
 * The nine plain scenarios under forge's names test what forge's "lambda" scenarios test (same
 * tools, required steps, ideal iterations; validation on the answer text), every slip lands
 * where its scenario says, our argument-checking variants live on as `<name>_checked`, and the
 * compaction chain runs at forge's budgets and still reaches the phase each is named for.
 */
import { describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { clientFactory } from "../../eval/backends.js";
import { runScenario, type RunConfig } from "../../eval/harness.js";
import type { EvalScenario, Slip, TerminalCall } from "../../eval/scenario.js";
import { captured, mentionsAll, mentionsAny } from "../../eval/scenarios/answer-text.js";
import { CHECKED } from "../../eval/scenarios/checked.js";
import { COMPACTION_CHAIN } from "../../eval/scenarios/compaction-chain.js";
import { ALL_SCENARIOS, CORE_SCENARIOS, selectScenarios } from "../../eval/scenarios/index.js";
import { rememberingOracle, Seen, slippingOracle, unansweredTurns } from "../../eval/scenarios/oracle-kit.js";
import { STATEFUL_VARIANTS } from "../../eval/scenarios/stateful-variant.js";
import { SimulatedClient } from "../../src/clients/simulated.js";

/** forge's tests/eval/scenarios: tools, required steps, terminal, ideal and max iterations, tags. */
const FORGE = {
  basic_2step: { tools: ["get_country_info", "summarize"], required: ["get_country_info"], terminal: "summarize", ideal: 2, max: 15, tags: ["plumbing"] },
  sequential_3step: { tools: ["fetch_sales_data", "analyze_sales", "report"], required: ["fetch_sales_data", "analyze_sales"], terminal: "report", ideal: 3, max: 15, tags: ["plumbing"] },
  error_recovery: { tools: ["fetch", "summarize"], required: ["fetch"], terminal: "summarize", ideal: 2, max: 15, tags: ["plumbing"] },
  tool_selection: {
    tools: ["search_web", "read_file", "list_directory", "run_command", "send_email", "lookup_user", "get_permissions", "respond"],
    required: ["lookup_user", "get_permissions"], terminal: "respond", ideal: 3, max: 15, tags: ["model_quality"],
  },
  argument_fidelity: { tools: ["lookup_entity", "fetch_details", "present"], required: ["lookup_entity", "fetch_details"], terminal: "present", ideal: 3, max: 15, tags: ["model_quality"] },
  sequential_reasoning: {
    tools: ["identify_patient", "get_records", "check_interactions", "recommend"],
    required: ["identify_patient", "get_records", "check_interactions"], terminal: "recommend", ideal: 4, max: 15, tags: ["model_quality"],
  },
  conditional_routing: {
    tools: ["get_alert", "check_metrics", "check_logs", "check_deployment", "diagnose"],
    required: ["get_alert", "check_metrics"], terminal: "diagnose", ideal: 4, max: 15, tags: ["model_quality", "reasoning"],
  },
  data_gap_recovery: {
    tools: ["get_employee", "security_audit", "personnel_file", "onboarding_records", "compliance_check", "hr_directory", "submit_report"],
    required: ["get_employee"], terminal: "submit_report", ideal: 5, max: 15, tags: ["model_quality", "reasoning"],
  },
  relevance_detection: { tools: ["get_forecast", "book_flight", "check_hotel", "convert_currency", "decline"], required: [], terminal: "decline", ideal: 1, max: 5, tags: ["model_quality"] },
} as const;
const PLAIN = Object.keys(FORGE) as (keyof typeof FORGE)[];

/**
 * Where each slip leads when it is the only mistake: a wrong answer under both ablations, a
 * miss that reforged's guardrail (the counter named) recovers and bare does not, or a wasted
 * call that still ends correct.
 */
type Landing =
  | { kind: "wrong" }
  | { kind: "recovered"; by: "stepNudges" | "retryNudges" | "toolErrors"; bareError: string }
  | { kind: "wasted_call" };
const SLIPS: Record<string, Landing> = {
  "basic_2step/answers_in_prose": { kind: "recovered", by: "retryNudges", bareError: "ToolCallError" },
  "basic_2step/summarizes_the_population": { kind: "wrong" },
  "sequential_3step/skips_the_analysis": { kind: "recovered", by: "stepNudges", bareError: "ValidationFailed" },
  "sequential_3step/drops_a_finding": { kind: "wrong" },
  "error_recovery/unpadded_count": { kind: "recovered", by: "toolErrors", bareError: "ToolExecutionError" },
  "tool_selection/searches_the_web_first": { kind: "wasted_call" },
  "tool_selection/drops_admin": { kind: "wrong" },
  "argument_fidelity/passes_the_name_not_the_id": { kind: "wrong" },
  "sequential_reasoning/recommends_before_checking": { kind: "recovered", by: "stepNudges", bareError: "ValidationFailed" },
  "conditional_routing/blames_the_old_incident": { kind: "recovered", by: "stepNudges", bareError: "ValidationFailed" },
  "conditional_routing/blames_the_pool": { kind: "wrong" },
  "data_gap_recovery/narrates_the_dead_end": { kind: "recovered", by: "retryNudges", bareError: "ToolCallError" },
  "data_gap_recovery/gives_up_on_the_contact": { kind: "wrong" },
  "relevance_detection/answers_it_itself": { kind: "recovered", by: "retryNudges", bareError: "ToolCallError" },
};

const one = (name: string): EvalScenario => selectScenarios({ names: [name] })[0]!;
const config = (ablation: string, makeClient = clientFactory({ backend: "sim", model: "clean" })): RunConfig => ({
  backend: "sim", model: "clean", ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 7, makeClient,
});
/** The clean simulated model with exactly this slip on (the profile itself never slips or faults). */
const forcing = (slip: Slip) =>
  config("reforged", async ({ scenario, instance, seed }) =>
    new SimulatedClient({ oracle: rememberingOracle(slippingOracle(scenario.oracle, [slip])), workflow: instance.workflow, profile: "clean", seed, usage: true }));
const withSlip = (slip: Slip, ablation: string): RunConfig => ({ ...forcing(slip), ablation: getAblation(ablation) });
const answer = (s: EvalScenario, args: Record<string, unknown>): boolean => s.validate({ tool: FORGE[s.name as keyof typeof FORGE].terminal, args, state: undefined } as TerminalCall);

describe("plain scenarios under forge's names", () => {
  it("are the nine forge names, in the core list, without the checked tag", () => {
    const core = CORE_SCENARIOS.map((s) => s.name);
    expect(core.slice(0, PLAIN.length).sort()).toEqual([...PLAIN].sort());
    for (const name of PLAIN) expect(one(name).tags).not.toContain("checked");
  });

  for (const name of PLAIN) {
    const forge = FORGE[name];

    it(`${name}: forge's tools, required steps, terminal, ideal/max iterations and tags`, () => {
      const s = one(name);
      const { workflow } = s.build();
      expect([...workflow.toolNames].sort()).toEqual([...forge.tools].sort());
      expect([...workflow.requiredSteps]).toEqual([...forge.required]);
      expect([...workflow.terminalTools]).toEqual([forge.terminal]);
      expect([s.idealIterations, s.maxIterations, s.budgetTokens]).toEqual([forge.ideal, forge.max, 8192]);
      expect(s.tags).toEqual([...forge.tags]);
      expect(s.slips?.length, "1 to 3 slips").toBeGreaterThanOrEqual(1);
      expect(s.slips!.length).toBeLessThanOrEqual(3);
    });

    it(`${name}: the clean model passes in exactly the ideal iterations, reforged and bare`, async () => {
      for (const ablation of ["reforged", "bare"]) {
        const r = await runScenario(one(name), config(ablation), 0);
        expect(r, ablation).toMatchObject({ correct: true, iterations: forge.ideal, toolErrors: 0, retryNudges: 0, stepNudges: 0 });
      }
    });

    for (const slip of one(name).slips ?? []) {
      const landing = SLIPS[`${name}/${slip.name}`];
      it(`${name}: slip ${slip.name} lands as ${landing?.kind ?? "(undeclared)"}`, async () => {
        expect(landing, "every slip has a declared landing").toBeDefined();
        const s = one(name);
        const reforged = await runScenario(s, withSlip(slip, "reforged"), 0);
        const bare = await runScenario(s, withSlip(slip, "bare"), 0);
        if (landing!.kind === "wrong") {
          for (const r of [reforged, bare]) expect(r).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
        } else if (landing!.kind === "recovered") {
          expect(reforged.correct).toBe(true);
          expect(reforged[landing!.by]).toBeGreaterThanOrEqual(1);
          expect(bare).toMatchObject({ correct: false, errorType: landing!.bareError });
        } else {
          for (const r of [reforged, bare]) expect(r).toMatchObject({ correct: true, iterations: forge.ideal + 1 });
        }
      });
    }
  }

  it("declares no landing for a slip that does not exist", () => {
    const declared = PLAIN.flatMap((name) => (one(name).slips ?? []).map((slip) => `${name}/${slip.name}`));
    expect(Object.keys(SLIPS).sort()).toEqual(declared.sort());
  });

  it("validate reads the answer text: the facts must be there, lures and decoys are refused", () => {
    const b2 = one("basic_2step");
    expect(answer(b2, { content: "The capital of France is Paris." })).toBe(true);
    expect(answer(b2, { content: "Paris." })).toBe(false);
    expect(answer(b2, { content: "About 2.1 million people live there." })).toBe(false);

    const s3 = one("sequential_3step");
    expect(answer(s3, { findings: "Revenue +23%; Widget Pro leads; APAC lags." })).toBe(true);
    expect(answer(s3, { findings: "Revenue grew 23% on last year, led by Widget Pro." })).toBe(false);
    expect(answer(s3, { findings: "Loaded 150 rows x 12 columns: sales for Q1 to Q4 of 2024." })).toBe(false);

    const er = one("error_recovery");
    expect(answer(er, { content: "Got 10 records." })).toBe(true);
    expect(answer(er, { content: "The fetch failed: count must be four digits." })).toBe(false);

    const ts = one("tool_selection");
    expect(answer(ts, { answer: "Alice: read, write and admin on forge-dev." })).toBe(true);
    expect(answer(ts, { answer: "Alice can read and write on forge-dev." })).toBe(false);
    expect(answer(ts, { answer: "User Alice: role Engineer, team Platform, user id U-1001." })).toBe(false);

    const af = one("argument_fidelity");
    expect(answer(af, { summary: "Widget Pro sold 1,500 units." })).toBe(true);
    expect(answer(af, { summary: 'Widget Pro: Warning: unknown entity_id "Widget Pro", nothing but defaults to show.' })).toBe(false);

    const sr = one("sequential_reasoning");
    expect(answer(sr, { patient_id: "PT-7829", findings: "Lisinopril: no ibuprofen (kidneys), no potassium supplements." })).toBe(true);
    expect(answer(sr, { patient_id: "PT-7829", findings: "Current medication: lisinopril 10mg. Continue the current treatment." })).toBe(false);

    const cr = one("conditional_routing");
    expect(answer(cr, { diagnosis: "SDK v4.0.0 changed the response schema", action: "Roll back to deploy-b82c1a" })).toBe(true);
    expect(answer(cr, { diagnosis: "The DB connection pool is exhausted again, as in November.", action: "Restart the pool." })).toBe(false);
    expect(answer(cr, { diagnosis: "Connection pool saturation.", action: "Scale the connection pool." })).toBe(false);
    expect(answer(cr, { diagnosis: "The SDK upgrade broke it", action: "Roll back" })).toBe(false);

    const dg = one("data_gap_recovery");
    const full = "Engineering. Clearance L3 (Confidential). Emergency contact: Michael Chen (spouse), (555) 867-5309.";
    expect(answer(dg, { employee_name: "Sarah Chen", report: full })).toBe(true);
    expect(answer(dg, { employee_name: "Sarah Chen", report: "Engineering. Clearance L3. Emergency contact: not on file." })).toBe(false);
    expect(answer(dg, { employee_name: "Sarah Chen", report: "Engineering. Emergency contact: Michael Chen (spouse)." })).toBe(false);

    const rd = one("relevance_detection");
    expect(answer(rd, { reason: "No tool here does maths." })).toBe(true);
    expect(answer(rd, { reason: " " })).toBe(false);
  });

  it("the plain scenarios' fetch tool and details tool refuse or warn on what a slip sends", async () => {
    const fetchTool = one("error_recovery").build().workflow.getTool("fetch");
    const ctx = { signal: new AbortController().signal, idempotencyKey: "k", runId: "r", iteration: 1, callIndex: 0 };
    await expect((async () => fetchTool.execute({ count: "10" }, ctx))()).rejects.toThrow(/four digits, zero-padded/);
    expect(await fetchTool.execute({ count: "0010" }, ctx)).toBe("Got 10 records.");
    const details = one("argument_fidelity").build().workflow.getTool("fetch_details");
    expect(await details.execute({ entity_id: "Widget Pro" }, ctx)).toMatch(/^Warning/);
    expect(await details.execute({ entity_id: "ENT-4728" }, ctx)).toContain("1500");
  });
});

describe("argument-checking variants", () => {
  it("are ours under <name>_checked, tagged checked on top of their tags, with no stateful wrapper", () => {
    expect(CHECKED.map((s) => s.name).sort()).toEqual(PLAIN.map((n) => `${n}_checked`).sort());
    for (const s of CHECKED) {
      const plain = FORGE[s.name.replace(/_checked$/, "") as keyof typeof FORGE];
      expect(s.tags, s.name).toEqual([...plain.tags, "checked"]);
    }
    expect(selectScenarios({ tags: ["checked"] })).toEqual(CHECKED);
    // The OG stateful variants are hand-written now; the wrapper keeps only our compaction ones, never a checked one.
    expect(STATEFUL_VARIANTS.map((s) => s.name)).toEqual(["compaction_stress_stateful", "phase2_compaction_stateful"]);
    expect(ALL_SCENARIOS.some((s) => s.name.endsWith("_checked_stateful"))).toBe(false);
  });

  it("still validate typed arguments: the right answer text with a wrong value is refused", () => {
    const checked = CHECKED.find((s) => s.name === "basic_2step_checked")!;
    expect(checked.validate({ tool: "report_weather", args: { city: "Paris", temp_c: 18, condition: "cloudy" }, state: undefined })).toBe(true);
    expect(checked.validate({ tool: "report_weather", args: { city: "Paris", temp_c: "18", condition: "cloudy" }, state: undefined })).toBe(false);
  });
});

describe("compaction chain at forge's budgets", () => {
  const chain = (suffix: string) => COMPACTION_CHAIN.find((s) => s.name === `compaction_chain_${suffix}`)!;

  it("uses forge's budgets: baseline 8,192, P1 3,600, P2 2,200, P3 1,536 tokens", () => {
    expect(COMPACTION_CHAIN.map((s) => [s.name, s.budgetTokens])).toEqual([
      ["compaction_chain_baseline", 8192],
      ["compaction_chain_p1", 3600],
      ["compaction_chain_p2", 2200],
      ["compaction_chain_p3", 1536],
    ]);
  });

  for (const [suffix, phase] of [["baseline", 0], ["p1", 1], ["p2", 2], ["p3", 3]] as const) {
    it(`${suffix} reaches compaction phase ${phase} and no further on the clean path, and validates`, async () => {
      const r = await runScenario(chain(suffix), config("reforged"), 0);
      expect(r).toMatchObject({ correct: true, iterations: 10 });
      expect(Math.max(0, ...r.compactionPhases)).toBe(phase);
    });
  }
});

describe("answer-text and oracle helpers", () => {
  it("mentionsAll/mentionsAny ignore case and commas; a non-string mentions nothing", () => {
    expect(mentionsAll("Sold 1,500 units of Widget Pro", ["1500", "widget pro"])).toBe(true);
    expect(mentionsAll("Sold 1500 units", ["1500", "widget pro"])).toBe(false);
    expect(mentionsAny("Roll back now", ["rollback", "roll back"])).toBe(true);
    expect(mentionsAll(undefined, [])).toBe(false);
    expect(mentionsAny(42, ["42"])).toBe(false);
    expect(captured("Entity ENT-4728: active", /\bENT-\d+/)).toBe("ENT-4728");
    expect(captured("medication: lisinopril 10mg", /medication: ([a-z]+)/)).toBe("lisinopril");
    expect(captured("nothing", /\bENT-\d+/)).toBe("");
  });

  it("Seen.text/succeeded/triedAfter and unansweredTurns read the view as slips need", () => {
    const ok = (tool: string, content = "x") => ({ tool, args: {}, content, isError: false });
    const err = (tool: string) => ({ tool, args: {}, content: "[StepEnforcementError] not yet", isError: true });
    const seen = new Seen([err("report"), ok("fetch", "rows=1"), ok("fetch", "rows=2")]);
    expect(seen.text("fetch")).toBe("rows=2");
    expect(seen.text("analyze")).toBe("");
    expect([seen.succeeded("fetch"), seen.succeeded("report")]).toEqual([true, false]);
    // A blocked report before the fetch does not count; one after it does.
    expect(seen.triedAfter("report", "fetch")).toBe(false);
    expect(new Seen([ok("fetch"), err("report")]).triedAfter("report", "fetch")).toBe(true);
    expect(unansweredTurns({ results: [ok("fetch")], userInput: "q", toolNames: [], turn: 2 })).toBe(1);
    expect(unansweredTurns({ results: [ok("a"), ok("b")], userInput: "q", toolNames: [], turn: 1 })).toBe(0);
  });
});
