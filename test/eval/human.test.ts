/**
 * The human-in-the-loop scenario family on the simulated model through the real runner: the
 * scenario's person answers every approval and question (the harness's onHumanRequest), the
 * model recovers from a rejection, and a person who decides wrongly makes validation fail.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { clientFactory } from "../../eval/backends.js";
import { evalMain } from "../../eval/cli/run.js";
import { runScenario, type RunConfig } from "../../eval/harness.js";
import { playOracle } from "../../eval/oracle-play.js";
import type { EvalScenario, Person } from "../../eval/scenario.js";
import { HUMAN } from "../../eval/scenarios/human.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import type { HumanRequest } from "../../src/loop/human.js";

const sim = (model: "clean" | "small-model", ablation = "reforged"): RunConfig => ({
  backend: "sim", model, ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 42,
  makeClient: clientFactory({ backend: "sim", model }),
});
const named = (name: string) => HUMAN.find((s) => s.name === name)!;
/** The scenario with its person wrapped so every request it is asked is kept. */
function asking(s: EvalScenario, person: Person = s.person!): { scenario: EvalScenario; asked: HumanRequest[] } {
  const asked: HumanRequest[] = [];
  return { scenario: { ...s, person: (request) => (asked.push(request), person(request)) }, asked };
}

afterEach(() => vi.restoreAllMocks());

describe("human scenario family", () => {
  it("has five scenarios, each plain and stateful, tagged human", () => {
    expect(HUMAN.map((s) => s.name)).toEqual([
      "human_approval_granted", "human_approval_rejected", "human_rejected_smaller", "human_ask_user", "human_approval_edited",
      "human_approval_granted_stateful", "human_approval_rejected_stateful", "human_rejected_smaller_stateful", "human_ask_user_stateful", "human_approval_edited_stateful",
    ]);
    expect(selectScenarios({ tags: ["human"] })).toEqual(HUMAN);
    for (const s of HUMAN) expect(s.person, s.name).toBeTypeOf("function");
  });

  // What the person is asked on the ideal path: one request each, of this kind, for these args.
  const ASKED: Record<string, Partial<HumanRequest>> = {
    human_approval_granted: { tool: "issue_refund", kind: "approval", args: { order_id: "ORD-1042", amount_usd: 340 } },
    human_approval_rejected: { tool: "issue_refund", kind: "approval", args: { order_id: "ORD-1187", amount_usd: 480 } },
    human_rejected_smaller: { tool: "issue_refund", kind: "approval", args: { order_id: "ORD-1305", amount_usd: 150 } },
    human_ask_user: { tool: "ask_user", kind: "input" },
    human_approval_edited: { tool: "issue_refund", kind: "approval", args: { order_id: "ORD-1220", amount_usd: 260 } },
  };

  for (const s of HUMAN) {
    it(`${s.name}: the clean simulated model, with the scenario's person, validates on the ideal path`, async () => {
      const { scenario, asked } = asking(s);
      const record = await runScenario(scenario, sim("clean"), 0);
      expect(record).toMatchObject({ completed: true, correct: true, iterations: s.idealIterations, toolErrors: 0 });
      expect(asked).toMatchObject([ASKED[s.name.replace(/_stateful$/, "")]!]);
    });
  }

  it("the simulated small model validates every human scenario over 5 runs each (reforged)", async () => {
    const config = sim("small-model");
    const records = [];
    for (const s of HUMAN) for (let i = 0; i < 5; i++) records.push(await runScenario(s, config, i));
    expect(records.filter((r) => !r.correct).map((r) => `${r.scenario}#${r.runIndex} ${r.errorType}`)).toEqual([]);
  });

  it("a rejected call never runs: the model takes the person's way round (escalation, a smaller refund)", async () => {
    for (const name of ["human_approval_rejected_stateful", "human_rejected_smaller_stateful"]) {
      const instance = named(name).build();
      const { scenario } = asking({ ...named(name), build: () => instance });
      expect((await runScenario(scenario, sim("clean"), 0)).correct).toBe(true);
      const ledger = (instance.state as { ledger: { tool: string; args: Record<string, unknown> }[] }).ledger;
      // The declined full refund is not in the ledger: only calls that ran are.
      expect(ledger.filter((e) => e.tool === "issue_refund" && Number(e.args.amount_usd) > 100)).toEqual([]);
    }
  });

  describe("a person who decides wrongly fails validation", () => {
    const wrong: [string, Person][] = [
      ["human_approval_granted", () => ({ type: "reject", reason: "no refunds today" })],
      ["human_approval_rejected", () => ({ type: "approve" })],
      ["human_approval_edited", () => ({ type: "approve" })],
      ["human_ask_user", (r) => (r.kind === "input" ? { type: "answer", answer: "It's order ORD-2078." } : { type: "approve" })],
    ];
    for (const [name, person] of wrong) {
      for (const variant of [name, `${name}_stateful`]) {
        it(variant, async () => {
          const { scenario, asked } = asking(named(variant), person);
          const record = await runScenario(scenario, sim("clean"), 0);
          expect(asked.length).toBeGreaterThan(0);
          expect(record.correct).toBe(false);
        });
      }
    }

    it("the oracle's own play agrees: a wrong person, an invalid play", async () => {
      const edited = await playOracle({ ...named("human_approval_edited"), person: () => ({ type: "approve" }) });
      expect(edited).toMatchObject({ valid: false, terminal: { args: { refunded_usd: 260 } } });
      await expect(playOracle({ ...named("human_ask_user"), person: undefined })).rejects.toThrow(/asks a person, but the scenario has none/);
    });
  });

  it("without a person the run waits, which the harness records as a RunWaitingError", async () => {
    const record = await runScenario({ ...named("human_approval_granted"), person: undefined }, sim("clean"), 0);
    expect(record).toMatchObject({ completed: false, correct: false, errorType: "RunWaitingError" });
  });

  it("the eval CLI names the human tag in --help and runs the family by tag", async () => {
    const out: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void out.push(String(line)));
    await evalMain(["--help"]);
    expect(out.join("\n")).toMatch(/--tags +scenarios with any of these tags: .*\bhuman\b/);
    out.length = 0;
    await evalMain(["--list"]);
    expect(out.filter((l) => l.includes("[human]") || l.includes("[stateful, human]"))).toHaveLength(HUMAN.length);
    out.length = 0;
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    await evalMain(["--tags", "human", "--runs", "1", "--model", "clean"]);
    expect(out.join("\n")).toMatch(/sim:clean@reforged +100\.0% +100\.0% +100\.0% +100% +0\.0 +\S+ +1( +100){10}$/m);
  });
});
