import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { ALL_SCENARIOS, selectScenarios } from "../../eval/scenarios/index.js";
import { playOracle } from "../../eval/oracle-play.js";
import { facts, planOracle } from "../../eval/scenarios/oracle-kit.js";
import { fixturesOf, releaseAll } from "../../eval/fixture.js";

describe("scenario suite", () => {
  // One opening of each fixture (the mcp family's server) for every play below, not one per play.
  const fixtures = fixturesOf(ALL_SCENARIOS);
  beforeAll(async () => {
    for (const f of fixtures) await f.acquire();
  });
  afterAll(() => releaseAll(fixtures));

  it("has the seed's 29 scenarios plus the 8 advanced, 9 checked, 10 human and 4 mcp ones, with unique names", () => {
    const names = ALL_SCENARIOS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBe(60);
    expect(ALL_SCENARIOS.filter((s) => s.tags.includes("checked")).map((s) => s.name)).toEqual([
      "basic_2step_checked", "sequential_3step_checked", "error_recovery_checked", "tool_selection_checked", "argument_fidelity_checked",
      "sequential_reasoning_checked", "relevance_detection_checked", "conditional_routing_checked", "data_gap_recovery_checked",
    ]);
    for (const n of ["basic_2step", "relevance_detection", "basic_2step_stateful_tre", "inventory_audit", "supplier_deep_dive", "compaction_chain_p3", "human_approval_granted", "human_ask_user_stateful", "mcp_rescue_text"]) {
      expect(names).toContain(n);
    }
  });

  for (const s of ALL_SCENARIOS) {
    it(`${s.name}: oracle reaches a valid terminal call in exactly idealIterations turns`, async () => {
      const play = await playOracle(s);
      expect(play.valid).toBe(true);
      expect(play.turns).toBe(s.idealIterations);
      expect(play.turns).toBeLessThanOrEqual(s.maxIterations);
    });
  }

  it("stateful scenarios get fresh state per build", async () => {
    for (const s of ALL_SCENARIOS.filter((x) => x.tags.includes("stateful"))) {
      const a = s.build();
      const b = s.build();
      expect(a.state).not.toBe(b.state);
      // Playing twice must succeed twice: no state leaks between runs.
      expect((await playOracle(s)).valid).toBe(true);
      expect((await playOracle(s)).valid).toBe(true);
    }
  });

  it("validate rejects a wrong terminal call", async () => {
    for (const s of ALL_SCENARIOS) {
      const play = await playOracle(s);
      const wrong = { ...play.terminal, args: Object.fromEntries(Object.keys(play.terminal.args).map((k) => [k, "WRONG"])) };
      if (!s.name.startsWith("relevance_detection")) expect(s.validate(wrong), s.name).toBe(false);
    }
    const relevance = ALL_SCENARIOS.find((s) => s.name === "relevance_detection")!;
    expect(relevance.validate({ tool: "decline", args: { reason: "  " }, state: undefined })).toBe(false);
    const checked = ALL_SCENARIOS.find((s) => s.name === "relevance_detection_checked")!;
    expect(checked.validate({ tool: "answer", args: { text: "France" }, state: undefined })).toBe(false);
  });

  it("selectScenarios filters by name and tag and rejects unknown names", () => {
    expect(selectScenarios({ names: ["basic_2step"] }).map((s) => s.name)).toEqual(["basic_2step"]);
    expect(selectScenarios({ tags: ["stateful"] }).every((s) => s.tags.includes("stateful"))).toBe(true);
    expect(() => selectScenarios({ names: ["nope"] })).toThrow(/unknown scenario/);
  });

  it("planOracle resumes from the first unfinished step whatever noise precedes it", () => {
    const oracle = planOracle([
      { tool: "a", args: () => ({ x: 1 }) },
      { tool: "b", args: (s) => ({ y: s.get("a", "y", "?") }) },
    ]);
    fc.assert(
      fc.property(fc.array(fc.record({ tool: fc.constantFrom("a", "b", "zz"), content: fc.constantFrom("[ToolError] x", "noise") }), { maxLength: 6 }), (noise) => {
        const errors = noise.map((n) => ({ tool: n.tool, args: { x: 2 }, content: "[ToolError] bad", isError: true }));
        const view = { results: [...errors, { tool: "a", args: { x: 1 }, content: "y=7", isError: false }], userInput: "", toolNames: [], turn: 1 };
        expect(oracle(view)).toEqual({ tool: "b", args: { y: "7" } });
      }),
    );
    expect(facts("a=1 b=x-2, c=3;")).toEqual({ a: "1", b: "x-2", c: "3" });
  });
});
