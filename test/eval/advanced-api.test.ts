/**
 * The advanced_reasoning part-B family (inconsistent_api_recovery, grounded_synthesis and their
 * stateful pairs) on the simulated model through the real runner: the clean path validates under
 * every guardrail setting, each slip forced on lands where its doc says, the legacy endpoints
 * answer each convention break in text, and validation refuses every lure.
 */
import { describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import type { ClientFactory } from "../../eval/backends.js";
import { clientFactory } from "../../eval/backends.js";
import { runScenario, type RunConfig } from "../../eval/harness.js";
import { playOracle } from "../../eval/oracle-play.js";
import type { EvalScenario, ScenarioInstance } from "../../eval/scenario.js";
import {
  ADVANCED_API,
  auditReportValid,
  hiringDecisionValid,
  hiringGrounded,
  legacyAuditDone,
  resolveCandidate,
  type HiringState,
  type LegacyAuditState,
} from "../../eval/scenarios/advanced-api.js";
import { ALL_SCENARIOS } from "../../eval/scenarios/index.js";
import { rememberingOracle, slippingOracle } from "../../eval/scenarios/oracle-kit.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { ToolResolutionError } from "../../src/core/index.js";

const named = (name: string): EvalScenario => ADVANCED_API.find((s) => s.name === name)!;

const config = (ablation: string, makeClient: ClientFactory = clientFactory({ backend: "sim", model: "clean" })): RunConfig => ({
  backend: "sim", model: "clean", ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 7, makeClient,
});

/** The clean simulated model with the named slips of the scenario forced on (no plumbing faults). */
const forcing = (slipNames: readonly string[]): ClientFactory => async ({ scenario, instance, seed }) => {
  const slips = (scenario.slips ?? []).filter((s) => slipNames.includes(s.name));
  expect(slips.map((s) => s.name)).toEqual(slipNames);
  return new SimulatedClient({ oracle: rememberingOracle(slippingOracle(scenario.oracle, slips)), workflow: instance.workflow, profile: "clean", seed, usage: true });
};

/** The scenario with its per-run instance kept, so a test can read the state the run left. */
function keeping<T>(s: EvalScenario): { scenario: EvalScenario; last: () => ScenarioInstance<T> } {
  let instance: ScenarioInstance | undefined;
  return {
    scenario: { ...s, build: () => (instance = s.build()) },
    last: () => instance as ScenarioInstance<T>,
  };
}

async function callTool(s: EvalScenario, tool: string, args: Record<string, unknown>, instance = s.build()): Promise<string> {
  const def = instance.workflow.getTool(tool);
  const checked = def.validateArgs(args);
  if (!checked.ok) throw new Error(`test args for ${tool} invalid: ${JSON.stringify(checked.issues)}`);
  const ctx = { signal: new AbortController().signal, idempotencyKey: "t:1:0", runId: "t", iteration: 1, callIndex: 0 };
  return String(await def.execute(checked.value, ctx));
}

const GOOD_REPORT = JSON.stringify({ flagged_count: 0, total_usd: "25500.00", compliance_status: "PASS", txn_count: 3 });
const GOOD_RATIONALE = "Aisha is eligible and has payments experience; Sarah Chen has a non-compete and James Patel needs a visa.";

describe("advanced_reasoning part B", () => {
  it("has the four scenarios, plain first, tagged as the brief asks, registered beside their kinds", () => {
    expect(ADVANCED_API.map((s) => s.name)).toEqual(["inconsistent_api_recovery", "grounded_synthesis", "inconsistent_api_recovery_stateful", "grounded_synthesis_stateful"]);
    for (const s of ADVANCED_API) {
      expect(s.tags, s.name).toEqual(s.name.endsWith("_stateful") ? ["stateful", "advanced", "reasoning"] : ["advanced", "reasoning"]);
      expect(s.maxIterations, s.name).toBe(20);
      expect(s.slips?.length, s.name).toBeGreaterThanOrEqual(1);
      expect(s.slips?.length, s.name).toBeLessThanOrEqual(3);
    }
    const names = ALL_SCENARIOS.map((s) => s.name);
    // Plain ones among the plain scenarios (before the first stateful one), stateful ones after our custom stateful family.
    const firstStateful = ALL_SCENARIOS.findIndex((x) => x.tags.includes("stateful"));
    expect(names.indexOf("inconsistent_api_recovery")).toBeLessThan(firstStateful);
    expect(names.indexOf("grounded_synthesis")).toBeLessThan(firstStateful);
    expect(names.indexOf("inconsistent_api_recovery_stateful")).toBeGreaterThan(names.indexOf("supplier_deep_dive"));
    expect(names.indexOf("grounded_synthesis_stateful")).toBeGreaterThan(names.indexOf("supplier_deep_dive"));
  });

  for (const s of ADVANCED_API) {
    it(`${s.name}: the clean model validates in idealIterations turns, with and without guardrails`, async () => {
      for (const ablation of ["reforged", "bare"]) {
        const r = await runScenario(s, config(ablation), 0);
        expect(r, `${s.name}@${ablation}`).toMatchObject({ completed: true, correct: true, iterations: s.idealIterations, toolErrors: 0 });
      }
    });
  }
});

describe("inconsistent_api_recovery", () => {
  const iar = named("inconsistent_api_recovery");

  it("each endpoint answers its own convention break with an ERROR text, not a throw", async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["legacy_list_accounts", { page: 0, page_size: 50 }, /count from 1/],
      ["legacy_get_balance", { account_id: "12345" }, /ACC- prefix/],
      ["legacy_get_transactions", { account_id: "12345", since: "2024-10-01", until: "2024-12-31" }, /ACC- prefix/],
      ["legacy_get_transactions", { account_id: "ACC-12345", since: "1727740800", until: "1735603200" }, /YYYY-MM-DD/],
      ["legacy_categorize_spend", { txn_id: 42, category: "services" }, /SVCS \| HRDW \| TRVL \| MISC/],
      ["legacy_check_compliance", { region: "US", period: "2024-Q4" }, /lower case/],
      ["legacy_check_compliance", { region: "us", period: "Q4 2024" }, /YYYY-QN/],
      ["legacy_aggregate_subtotal", { amounts: "5000.00, 12500.00, 8000.00" }, /joined by a pipe/],
      ["legacy_aggregate_subtotal", { amounts: "5000|twelve" }, /not a decimal dollar amount/],
    ];
    for (const [tool, args, complaint] of cases) {
      const out = await callTool(iar, tool, args);
      expect(out, `${tool} ${JSON.stringify(args)}`).toMatch(/^ERROR: /);
      expect(out).toMatch(complaint);
      expect(out, "an error text carries no key=value a fact reader could take for data").not.toMatch(/\w=\S/);
    }
    // The declared types stay the runner's to check: a transaction's full id is not an integer.
    expect(iar.build().workflow.getTool("legacy_categorize_spend").validateArgs({ txn_id: "TXN/00042", category: "SVCS" }).ok).toBe(false);
  });

  it("answers the right calls with the data: cents in the ledger, dollars from the categorizer, the decoy accounts empty", async () => {
    const ledger = await callTool(iar, "legacy_get_transactions", { account_id: "ACC-12345", since: "2024-10-01", until: "2024-12-31" });
    expect(ledger).toContain("count=3");
    expect(ledger).toContain("txn=TXN/00043 date=2024-11-12 amount=1250000 unit=cents");
    expect(await callTool(iar, "legacy_get_transactions", { account_id: "ACC-12345", since: "2024-11-01", until: "2024-11-30" })).toContain("count=1");
    expect(await callTool(iar, "legacy_get_transactions", { account_id: "ACC-67890", since: "2024-10-01", until: "2024-12-31" })).toContain("count=0");
    expect(await callTool(iar, "legacy_categorize_spend", { txn_id: 42, category: "SVCS" })).toContain("amount_usd=5000.00");
    expect(await callTool(iar, "legacy_aggregate_subtotal", { amounts: "5000.00|12500.00|8000.00" })).toBe("subtotal_usd=25500.00 amounts_processed=3");
    expect(await callTool(iar, "legacy_get_balance", { account_id: "ACC-24680" })).toContain("status=FROZEN");
  });

  it("validate wants the dollar total as a whole number, the compliance result and txn_count", () => {
    const ok = (report: unknown) => iar.validate({ tool: "legacy_submit_audit", args: { report }, state: undefined });
    expect(ok(GOOD_REPORT)).toBe(true);
    expect(ok("total_usd: $25,500; compliance_status: pass; txn_count: 3")).toBe(true);
    expect(ok(GOOD_REPORT.replace("25500.00", "2550000.00")), "the total in cents").toBe(false);
    expect(ok(GOOD_REPORT.replace("25500.00", "7500.00")), "the balance taken for the total").toBe(false);
    expect(ok(GOOD_REPORT.replace("PASS", "UNKNOWN")), "no compliance result").toBe(false);
    expect(ok(GOOD_REPORT.replace("txn_count", "transactions")), "no txn_count").toBe(false);
    expect(ok({ total_usd: "25500", compliance_status: "PASS", txn_count: 3 }), "not a string").toBe(false);
  });

  it("totals_in_cents: the unconverted total is filed and rejected, guardrails or not", async () => {
    for (const ablation of ["reforged", "bare"]) {
      const r = await runScenario(iar, config(ablation, forcing(["totals_in_cents"])), 0);
      expect(r, ablation).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
    }
  });

  it("stops_at_legacy_error: a retry nudge brings the model back (reforged); bare ends at the prose", async () => {
    const on = await runScenario(iar, config("reforged", forcing(["stops_at_legacy_error"])), 0);
    expect(on).toMatchObject({ correct: true, retryNudges: 1, iterations: iar.idealIterations + 1 });
    const off = await runScenario(iar, config("bare", forcing(["stops_at_legacy_error"])), 0);
    expect(off).toMatchObject({ completed: false, correct: false, errorType: "ToolCallError" });
  });
});

describe("grounded_synthesis", () => {
  const gs = named("grounded_synthesis");
  const decide = (candidate: string, rationale = GOOD_RATIONALE) => gs.validate({ tool: "submit_hiring_decision", args: { candidate, rationale }, state: undefined });

  it("every tool answers from the same five candidates; an unknown name is a resolution miss", async () => {
    const pool = await callTool(gs, "get_candidate_pool", {});
    for (const n of ["Sarah Chen", "James Patel", "Aisha Nakamura", "Marcus Reyes", "Diana Kim"]) expect(pool).toContain(n);
    expect(await callTool(gs, "get_compatibility_check", { candidate_name: "sarah chen" })).toMatch(/non-compete covenant/);
    expect(await callTool(gs, "get_compatibility_check", { candidate_name: "Patel" })).toMatch(/H-1B visa/);
    expect(await callTool(gs, "get_compatibility_check", { candidate_name: "Diana Kim" })).toMatch(/no restrictive covenants/);
    expect(await callTool(gs, "get_team_dynamics", { candidate_name: "Diana" })).toMatch(/engineering-management track/);
    expect(resolveCandidate("  NAKAMURA ")).toBe("Aisha Nakamura");
    expect(resolveCandidate("an")).toBeUndefined();
    await expect(callTool(gs, "get_skill_summary", { candidate_name: "Jane Doe" })).rejects.toSatisfy((e) => ToolResolutionError.isInstance(e));
  });

  it("validate wants Aisha Nakamura and a rationale that weighed the others", () => {
    expect(decide("Aisha Nakamura")).toBe(true);
    expect(decide("aisha", "The others: Diana wants a lead role.")).toBe(true);
    for (const lure of ["Sarah Chen", "James Patel", "Diana Kim", "Marcus Reyes"]) expect(decide(lure), lure).toBe(false);
    expect(decide("Aisha Nakamura", "Strong payments background and a quick ramp."), "no blocker, nobody passed over").toBe(false);
    expect(decide("Aisha Nakamura", "Skimmed the options."), "names match as words only").toBe(false);
  });

  it("picks_top_scorer and overlooks_team_fit: the lure is hired and rejected, guardrails or not", async () => {
    for (const slip of ["picks_top_scorer", "overlooks_team_fit"]) {
      for (const ablation of ["reforged", "bare"]) {
        const r = await runScenario(gs, config(ablation, forcing([slip])), 0);
        expect(r, `${slip}@${ablation}`).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
      }
    }
  });

  it("decides_before_reading: step enforcement blocks the early decision (reforged); bare files it", async () => {
    const on = await runScenario(gs, config("reforged", forcing(["decides_before_reading"])), 0);
    expect(on).toMatchObject({ correct: true, stepNudges: 1, iterations: gs.idealIterations + 1 });
    const off = await runScenario(gs, config("bare", forcing(["decides_before_reading"])), 0);
    expect(off).toMatchObject({ completed: true, correct: false, iterations: 2, errorType: "ValidationFailed" });
  });
});

describe("inconsistent_api_recovery_stateful", () => {
  const st = named("inconsistent_api_recovery_stateful");

  it("the backend records the real calls; categorizing writes onto the ledger; ERROR calls record nothing", async () => {
    const { workflow, state } = st.build() as ScenarioInstance<LegacyAuditState>;
    const instance = { workflow, state };
    await callTool(st, "legacy_get_balance", { account_id: "12345" }, instance);
    await callTool(st, "legacy_check_compliance", { region: "US", period: "2024-Q4" }, instance);
    expect(state.balancesRead.size).toBe(0);
    expect(state.compliance).toBeUndefined();
    await callTool(st, "legacy_categorize_spend", { txn_id: 43, category: "HRDW" }, instance);
    expect(state.ledger.find((t) => t.id === "TXN/00043")?.code).toBe("HRDW");
    expect((st.build().state as LegacyAuditState).ledger.every((t) => t.code === undefined), "a fresh ledger per run").toBe(true);
  });

  it("validate needs the report and every step really run, for the audited account and quarter", async () => {
    const play = await playOracle(st);
    expect(play.valid).toBe(true);
    const state = play.terminal.state as LegacyAuditState;
    expect(legacyAuditDone(state)).toBe(true);
    const off = (change: (s: LegacyAuditState) => void) => {
      const copy: LegacyAuditState = { ...state, balancesRead: new Set(state.balancesRead), transactionsRead: new Map(state.transactionsRead), ledger: state.ledger.map((t) => ({ ...t })), reports: [...state.reports] };
      change(copy);
      return st.validate({ ...play.terminal, state: copy });
    };
    expect(off((s) => (s.compliance = { region: "gb", period: "2024-Q4" })), "another region checked").toBe(false);
    expect(off((s) => s.transactionsRead.set("ACC-12345", { since: "2024-11-01", until: "2024-12-31" })), "part of the quarter read").toBe(false);
    expect(off((s) => (s.transactionsRead = new Map([["ACC-67890", { since: "2024-10-01", until: "2024-12-31" }]]))), "the decoy account read").toBe(false);
    expect(off((s) => (s.subtotal = [500000, 1250000, 800000])), "cents added up").toBe(false);
    expect(off((s) => s.ledger.forEach((t) => delete t.code)), "nothing categorized").toBe(false);
    expect(off((s) => (s.accountsListed = false)), "accounts never listed").toBe(false);
    expect(st.validate({ ...play.terminal, args: { report: GOOD_REPORT.replace("25500.00", "2550000") } }), "a wrong report on a done audit").toBe(false);
  });

  it("reports_unchecked_compliance: a right-looking report without the check is rejected by the state", async () => {
    for (const ablation of ["reforged", "bare"]) {
      const { scenario, last } = keeping<LegacyAuditState>(st);
      const r = await runScenario(scenario, config(ablation, forcing(["reports_unchecked_compliance"])), 0);
      expect(r, ablation).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
      const { state } = last();
      expect(auditReportValid(state.reports[0]), "the report alone would pass").toBe(true);
      expect(state.compliance).toBeUndefined();
    }
  });

  it("totals_in_cents and stops_at_legacy_error land as in the plain scenario", async () => {
    expect(await runScenario(st, config("reforged", forcing(["totals_in_cents"])), 0)).toMatchObject({ correct: false, errorType: "ValidationFailed" });
    expect(await runScenario(st, config("reforged", forcing(["stops_at_legacy_error"])), 0)).toMatchObject({ correct: true, retryNudges: 1 });
    expect(await runScenario(st, config("bare", forcing(["stops_at_legacy_error"])), 0)).toMatchObject({ correct: false, errorType: "ToolCallError" });
  });
});

describe("grounded_synthesis_stateful", () => {
  const st = named("grounded_synthesis_stateful");

  it("validate needs the front-runners' compatibility checks read and one grounded decision", async () => {
    const play = await playOracle(st);
    expect(play.valid).toBe(true);
    const state = play.terminal.state as HiringState;
    expect([...state.compatibilityRead].sort()).toEqual(["Aisha Nakamura", "Diana Kim", "James Patel", "Marcus Reyes", "Sarah Chen"]);
    const without = (name: string): HiringState => ({ ...state, compatibilityRead: new Set([...state.compatibilityRead].filter((n) => n !== name)) });
    expect(st.validate({ ...play.terminal, state: without("Sarah Chen") })).toBe(false);
    expect(st.validate({ ...play.terminal, state: without("James Patel") })).toBe(false);
    expect(st.validate({ ...play.terminal, state: { ...state, decisions: [...state.decisions, ...state.decisions] } }), "two decisions filed").toBe(false);
    expect(st.validate({ ...play.terminal, args: { candidate: "Diana Kim", rationale: GOOD_RATIONALE } }), "the lure on a grounded state").toBe(false);
  });

  it("guesses_without_checks: the right name without the checks passes the words, not the state", async () => {
    for (const ablation of ["reforged", "bare"]) {
      const { scenario, last } = keeping<HiringState>(st);
      const r = await runScenario(scenario, config(ablation, forcing(["guesses_without_checks"])), 0);
      expect(r, ablation).toMatchObject({ completed: true, correct: false, iterations: 3, errorType: "ValidationFailed" });
      const { state } = last();
      expect(hiringDecisionValid(state.decisions[0]!), "the plain scenario would accept these words").toBe(true);
      expect(hiringGrounded(state)).toBe(false);
    }
  });

  it("picks_top_scorer and overlooks_team_fit are rejected here too", async () => {
    for (const slip of ["picks_top_scorer", "overlooks_team_fit"]) {
      expect(await runScenario(st, config("reforged", forcing([slip])), 0), slip).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
    }
  });
});
