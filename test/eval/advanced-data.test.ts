import { describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { clientFactory } from "../../eval/backends.js";
import { runScenario, runSeed, type RunConfig } from "../../eval/harness.js";
import { playOracle } from "../../eval/oracle-play.js";
import type { EvalScenario, Slip } from "../../eval/scenario.js";
import {
  ADVANCED_DATA,
  argumentTransformation,
  argumentTransformationStateful,
  dataGapRecoveryExtended,
  dataGapRecoveryExtendedStateful,
  type ExpenseState,
  type HrState,
} from "../../eval/scenarios/advanced-data.js";
import { COMPACTION } from "../../eval/scenarios/compaction.js";
import { ALL_SCENARIOS } from "../../eval/scenarios/index.js";
import { activeSlips, planOracle, slippingOracle, type PlanStep } from "../../eval/scenarios/oracle-kit.js";
import { STATEFUL_CUSTOM } from "../../eval/scenarios/stateful-custom.js";

const config = (model: string, ablation: string): RunConfig => ({
  backend: "sim", model, ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 7,
  makeClient: clientFactory({ backend: "sim", model }),
});

/** The scenario as the clean model plays it with `slip` forced on (a clean model never slips by itself). */
const forced = (s: EvalScenario, slip: Slip): EvalScenario => ({ ...s, oracle: slippingOracle(s.oracle, [slip]) });
/** The scenario played along another path (a lure or decoy taken on purpose). */
const along = (s: EvalScenario, plan: PlanStep[]): EvalScenario => ({ ...s, oracle: planOracle(plan) });

const DGE = [dataGapRecoveryExtended, dataGapRecoveryExtendedStateful];
const AT = [argumentTransformation, argumentTransformationStateful];

const SARAH_REPORT =
  "Sarah Chen (E-1847), Engineering, Senior Backend Engineer. Clearance level: L3 Confidential. " +
  "Emergency contact: Michael Chen (spouse), 555-867-5309. Salary band: B7. Active access groups: payments-prod-v3, internal-apis-v2, staging-test.";
const AUDIT = { transaction_ids: "TX-1001, TX-1005, TX-1006, TX-1008", total_flagged_usd: "$28,980.00", top_vendor: "Wonka Industries" };

describe("advanced data scenarios", () => {
  it("are registered by forge's names and tags: plain after the compaction ones, stateful after the custom stateful ones", () => {
    expect(ADVANCED_DATA.map((s) => s.name)).toEqual(["data_gap_recovery_extended", "argument_transformation", "data_gap_recovery_extended_stateful", "argument_transformation_stateful"]);
    const names = ALL_SCENARIOS.map((s) => s.name);
    const after = (prev: string, next: string[]) => expect(names.slice(names.indexOf(prev) + 1, names.indexOf(prev) + 1 + next.length)).toEqual(next);
    after(COMPACTION.at(-1)!.name, ["data_gap_recovery_extended", "argument_transformation"]);
    after(STATEFUL_CUSTOM.at(-1)!.name, ["data_gap_recovery_extended_stateful", "argument_transformation_stateful"]);
    for (const s of ADVANCED_DATA) expect(s.tags).toEqual(s.name.endsWith("_stateful") ? ["stateful", "advanced", "reasoning"] : ["advanced", "reasoning"]);
    expect(ADVANCED_DATA.map((s) => [s.idealIterations, s.maxIterations])).toEqual([[8, 20], [5, 15], [8, 20], [5, 15]]);
  });

  for (const s of ADVANCED_DATA) {
    it(`${s.name}: the clean simulated model validates on the ideal path under reforged and bare`, async () => {
      for (const ablation of ["reforged", "bare"]) {
        const r = await runScenario(s, config("clean", ablation), 0);
        expect(r, ablation).toMatchObject({ completed: true, correct: true, iterations: s.idealIterations });
      }
    });

    for (const slip of s.slips ?? []) {
      it(`${s.name}: slip ${slip.name} forced on files a report validate rejects, under reforged and bare`, async () => {
        for (const ablation of ["reforged", "bare"]) {
          const r = await runScenario(forced(s, slip), config("clean", ablation), 0);
          expect(r, ablation).toMatchObject({ completed: true, correct: false, errorType: "ValidationFailed" });
        }
      });
    }
  }

  it("the slips are what the oracle would have done but for one wrong belief: the lure's values reach the report", async () => {
    const slip = (s: EvalScenario, name: string) => s.slips!.find((x) => x.name === name)!;
    const dge = async (name: string) => String((await playOracle(forced(dataGapRecoveryExtended, slip(dataGapRecoveryExtended, name)))).terminal.args.report);
    expect(await dge("takes_legacy_lure")).toMatch(/Salary band: B5\. Active access groups: legacy-readonly\./);
    expect(await dge("stale_access_groups")).toMatch(/Salary band: B7\. Active access groups: payments-prod, internal-apis, staging-\*\./);
    const at = async (name: string) => (await playOracle(forced(argumentTransformation, slip(argumentTransformation, name)))).terminal.args;
    expect(await at("skips_conversion")).toEqual({ transaction_ids: "TX-1001, TX-1005, TX-1008", total_flagged_usd: "$23,700.00", top_vendor: "Wonka Industries" });
    expect(await at("literal_vendor_match")).toEqual({ transaction_ids: "TX-1001, TX-1005, TX-1006, TX-1008, TX-1009", total_flagged_usd: "$35,480.00", top_vendor: "Wonka Industries" });
    expect(await at("strict_threshold")).toEqual({ transaction_ids: "TX-1001, TX-1006, TX-1008", total_flagged_usd: "$23,980.00", top_vendor: "Wonka Industries" });
  });

  it("the oracle derives the audit from the data it read: conversion at the rate seen, the alias resolved, the boundary kept", async () => {
    for (const s of AT) expect((await playOracle(s)).terminal.args).toEqual(AUDIT);
  });

  it("data_gap_recovery_extended validate accepts the five facts and rejects each lure's answer", () => {
    const check = (report: string) => dataGapRecoveryExtended.validate({ tool: "submit_report", args: { employee_name: "Sarah Chen", report }, state: undefined });
    expect(check(SARAH_REPORT)).toBe(true);
    expect(check(SARAH_REPORT.replace("B7", "B5")), "the archive's band").toBe(false);
    expect(check(SARAH_REPORT.replace("payments-prod-v3, internal-apis-v2, staging-test", "payments-prod, internal-apis, staging-*")), "provisioned groups").toBe(false);
    expect(check(SARAH_REPORT.replace("payments-prod-v3, internal-apis-v2, staging-test", "legacy-readonly")), "the archive's groups").toBe(false);
    expect(check(SARAH_REPORT.replace("Michael Chen (spouse), 555-867-5309", "[not kept in this record]")), "contact never found").toBe(false);
    expect(check(SARAH_REPORT.replace("L3 Confidential", "[restricted]")), "clearance never found").toBe(false);
    const james = "James Liu (E-2234), Marketing. Clearance level: L1 Public. Emergency contact: Linda Liu (mother), 555-234-5678. Salary band: B4. Active access groups: marketing-tools-v2, cms-prod-v3.";
    expect(check(james), "the decoy's record").toBe(false);
  });

  it("argument_transformation validate accepts forge's answer in either number format and rejects every wrong flagging rule", () => {
    const check = (over: Partial<typeof AUDIT>) => argumentTransformation.validate({ tool: "submit_audit_report", args: { ...AUDIT, ...over }, state: undefined });
    expect(check({})).toBe(true);
    expect(check({ total_flagged_usd: "28980" })).toBe(true);
    expect(check({ transaction_ids: "TX-1001,TX-1005,TX-1008", total_flagged_usd: "23700" }), "EUR not converted, TX-1006 dropped").toBe(false);
    expect(check({ total_flagged_usd: "$28,500.00" }), "EUR amount added as dollars").toBe(false);
    expect(check({ transaction_ids: `${AUDIT.transaction_ids}, TX-1009`, total_flagged_usd: "$35,480.00" }), "ACME Corp flagged").toBe(false);
    expect(check({ transaction_ids: "TX-1001, TX-1006, TX-1008", total_flagged_usd: "$23,980.00" }), "strictly over $5,000").toBe(false);
    expect(check({ top_vendor: "Stark Industries" }), "an approved vendor's largest transaction").toBe(false);
  });

  it("data_gap_recovery_extended_stateful: the decoy employee resolves, and Sarah's facts without her records read are refused", async () => {
    const sarah = (await playOracle(dataGapRecoveryExtendedStateful)).terminal;
    expect((sarah.state as HrState).reads).toEqual({ security_audit: ["E-1847"], onboarding_records: ["E-1847"], compensation_v2: ["E-1847"], project_assignments: ["E-1847"], legacy_records: [] });
    const id = () => ({ employee_id: "E-2234" });
    const decoyReads: PlanStep[] = [
      { tool: "get_employee", args: () => ({ name: "James Liu" }) },
      ...(["security_audit", "onboarding_records", "compensation_v2", "project_assignments"] as const).map((tool) => ({ tool, args: id })),
    ];
    // Reading the decoy's records and reporting them: every fact is his.
    const james = await playOracle(along(dataGapRecoveryExtendedStateful, [...decoyReads, { tool: "submit_report", args: (s) => ({ employee_name: "James Liu", report: s.results.map((r) => r.content).join("\n") }) }]));
    expect(String(james.terminal.args.report)).toMatch(/department=Marketing[\s\S]*clearance_level=L1_Public[\s\S]*salary_band=B4/);
    expect(james.valid).toBe(false);
    // Sarah's facts typed in while only the decoy's records were read: the report reads right, the state does not.
    const guessed = await playOracle(along(dataGapRecoveryExtendedStateful, [...decoyReads, { tool: "submit_report", args: () => ({ employee_name: "Sarah Chen", report: SARAH_REPORT }) }]));
    expect(dataGapRecoveryExtended.validate({ ...guessed.terminal, state: undefined })).toBe(true);
    expect(guessed.valid).toBe(false);
  });

  it("argument_transformation_stateful: the right figures without the tool conversion or the alias's record are refused", async () => {
    const list: PlanStep = { tool: "list_transactions", args: () => ({ quarter: "Q4", year: 2024 }) };
    const approved: PlanStep = { tool: "get_approved_vendors", args: () => ({}) };
    const convert: PlanStep = { tool: "currency_convert", args: () => ({ amount: 4800, from_currency: "EUR", to_currency: "USD" }) };
    const alias: PlanStep = { tool: "get_vendor_details", args: () => ({ vendor_name: "ACME Corp" }) };
    const submit: PlanStep = { tool: "submit_audit_report", args: () => AUDIT };
    const play = (plan: PlanStep[]) => playOracle(along(argumentTransformationStateful, plan));

    const inHead = await play([list, approved, alias, submit]);
    expect((inHead.terminal.state as ExpenseState).conversions).toEqual([]);
    expect(inHead.valid, "4,800 EUR converted in the head").toBe(false);
    expect((await play([list, approved, convert, submit])).valid, "ACME Corp's record never read").toBe(false);
    expect((await play([list, approved, convert, { tool: "get_vendor_details", args: () => ({ vendor_name: "Acme Corp" }) }, submit])).valid, "the master account read, not the alias").toBe(false);
    const full = await play([list, approved, convert, alias, submit]);
    expect(full.valid).toBe(true);
    expect(full.results.find((r) => r.tool === "currency_convert")!.content).toContain("converted=5280.00");
    expect((full.terminal.state as ExpenseState).filed).toEqual([AUDIT]);
  });

  it("stateful builds start from fresh records: a run's reads and filings never leak into the next", async () => {
    for (const s of [dataGapRecoveryExtendedStateful, argumentTransformationStateful]) {
      const first = (await playOracle(s)).terminal.state as { filed: unknown[] };
      expect(first.filed).toHaveLength(1);
      expect((s.build().state as { filed: unknown[] }).filed).toEqual([]);
      expect((await playOracle(s)).valid).toBe(true);
    }
  });

  it("slip rates put the small model near an 8B model's reforged score on forge's leaderboard (~76% and ~18%)", () => {
    const seeds = Array.from({ length: 1000 }, (_, i) => runSeed(42, "x", i));
    const unslipped = (s: EvalScenario) => seeds.filter((seed) => activeSlips(s.slips!, "small-model", seed).length === 0).length / seeds.length;
    const near = (share: number, target: number) => expect(Math.abs(share - target)).toBeLessThan(0.08);
    for (const s of DGE) near(unslipped(s), 0.76);
    for (const s of AT) near(unslipped(s), 0.18);
  });
});
