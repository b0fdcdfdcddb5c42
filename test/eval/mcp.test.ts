/**
 * The mcp scenario family end to end: the real @modelcontextprotocol/server-filesystem over
 * stdio, the simulated model through the real runner. Answers are right with the guardrails on,
 * the server's isError reaches the model and it recovers, each guardrail's variant fails
 * without it, and the server process is gone (its directory too) however the runs end.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { clientFactory, type ClientFactory } from "../../eval/backends.js";
import { runEval, runScenario, type RunConfig } from "../../eval/harness.js";
import type { OracleView } from "../../eval/scenario.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import { MCP } from "../../eval/scenarios/mcp.js";
import { MCP_WORKSPACE } from "../../eval/scenarios/mcp-workspace.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { EvalFixtureError } from "../../src/core/index.js";

const sim = (model: "clean" | "small-model", ablation = "reforged", makeClient: ClientFactory = clientFactory({ backend: "sim", model })): RunConfig => ({
  backend: "sim", model, ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 42, makeClient,
});
const named = (name: string) => MCP.find((s) => s.name === name)!;

/** True while a process with this id exists (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/** The server's process id and directory while the fixture is open, from inside a run. */
function serverSeen(seen: { pids: Set<number>; roots: Set<string> }) {
  const { pid, root } = MCP_WORKSPACE.value;
  if (pid === undefined) throw new Error("a stdio server has a pid while open");
  seen.pids.add(pid);
  seen.roots.add(root);
}

describe("mcp scenario family", () => {
  it("has four scenarios tagged mcp, selectable by tag, sharing one fixture that build() needs open", () => {
    expect(MCP.map((s) => s.name)).toEqual(["mcp_read_summarize", "mcp_missing_path", "mcp_steps_prereqs", "mcp_rescue_text"]);
    expect(selectScenarios({ tags: ["mcp"] })).toEqual(MCP);
    for (const s of MCP) expect(s.fixture, s.name).toBe(MCP_WORKSPACE);
    expect(() => MCP[0]!.build()).toThrow(EvalFixtureError);
  });

  it("plays the family on the small model with guardrails on: every answer right, one server for the plan, gone afterwards", async () => {
    const seen = { pids: new Set<number>(), roots: new Set<string>() };
    const records = await runEval({ scenarios: MCP, runs: 3, config: sim("small-model"), onRecord: () => serverSeen(seen) });
    expect(records.filter((r) => !r.correct).map((r) => `${r.scenario}#${r.runIndex} ${r.errorType}`)).toEqual([]);
    expect(records.every((r) => r.tags.includes("mcp"))).toBe(true);
    // Rescue is what made the text-only model's runs work.
    expect(records.filter((r) => r.scenario === "mcp_rescue_text").every((r) => r.rescues >= 3)).toBe(true);
    expect(seen.pids.size).toBe(1);
    expect(MCP_WORKSPACE.holders).toBe(0);
    for (const pid of seen.pids) expect(alive(pid), `server pid ${pid}`).toBe(false);
    for (const root of seen.roots) expect(existsSync(root), root).toBe(false);
  });

  describe("with the server held across tests (one start for all of them)", () => {
    beforeAll(() => MCP_WORKSPACE.acquire());
    afterAll(() => MCP_WORKSPACE.release());

    it("the server's isError reaches the model on the tool-error channel and it recovers by listing the directory", async () => {
      const views: OracleView[] = [];
      const watching: ClientFactory = async ({ scenario, instance, seed }) =>
        new SimulatedClient({ oracle: (view) => (views.push(view), scenario.oracle(view)), workflow: instance.workflow, profile: "clean", seed });
      const record = await runScenario(named("mcp_missing_path"), sim("clean", "reforged", watching), 0);
      expect(record).toMatchObject({ completed: true, correct: true, iterations: 5, toolErrors: 1 });
      const results = views.at(-1)!.results;
      expect(results.map((r) => [r.tool, r.isError])).toEqual([
        ["fs_list_allowed_directories", false],
        ["fs_read_text_file", true],
        ["fs_list_directory", false],
        ["fs_read_text_file", false],
      ]);
      // The server's own message, with the path as the model wrote it (not the temp directory).
      expect(results[1]!.content).toMatch(/^\[ToolError\] .*ENOENT: no such file or directory, open '\/workspace\/oncall\.md'$/);
      expect(results[2]!.content).toContain("[FILE] on-call.md");
    });

    it("each variant needs its guardrail: without recovery the error is fatal, without rescue the text-only model never calls", async () => {
      const noRecovery = await runScenario(named("mcp_missing_path"), sim("clean", "no_recovery"), 0);
      expect(noRecovery).toMatchObject({ completed: false, correct: false, toolErrors: 1 });
      const noRescue = await runScenario(named("mcp_rescue_text"), sim("clean", "no_rescue"), 0);
      expect(noRescue).toMatchObject({ completed: false, correct: false, rescues: 0 });
    });

    it("guardrails on vs off shows a lift on the small model (same seeds)", async () => {
      const score = async (ablation: string) => (await runEval({ scenarios: MCP, runs: 3, config: sim("small-model", ablation) })).filter((r) => r.correct).length;
      const [reforged, bare] = [await score("reforged"), await score("bare")];
      expect(reforged).toBe(12);
      // Bare cannot read Hermes text calls or survive the wrong path's isError: two of the four scenarios always fail.
      expect(bare).toBeLessThanOrEqual(6);
    });
  });

  it("the server is closed when a run throws mid-plan", async () => {
    const seen = { pids: new Set<number>(), roots: new Set<string>() };
    const boom = runEval({
      scenarios: MCP, runs: 1, config: sim("clean"),
      onRecord: () => {
        serverSeen(seen);
        throw new Error("consumer failed");
      },
    });
    await expect(boom).rejects.toThrow("consumer failed");
    expect(MCP_WORKSPACE.holders).toBe(0);
    expect(seen.pids.size).toBe(1);
    for (const pid of seen.pids) expect(alive(pid)).toBe(false);
    for (const root of seen.roots) expect(existsSync(root)).toBe(false);
  });
});
