/**
 * `eval:report` over several files: generations merged per config (older ones superseded, one
 * line says how many), same-generation duplicates dropped (the later kept), incomplete configs
 * left out unless --include-partial, scenarios dropped with --exclude-scenario.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { reportMain } from "../../eval/cli/report.js";
import type { RunRecord } from "../../eval/run-record.js";
import { record } from "./fixtures.js";
import { cliArgs } from "../support/cli.js";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, cliArgs("eval/cli/report.ts", ...args), { env: { ...env, NO_COLOR: "1" } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const dir = mkdtempSync(join(tmpdir(), "forge-eval-report-"));
let n = 0;
function file(records: readonly RunRecord[]): string {
  const path = join(dir, `r${n++}.jsonl`);
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return path;
}

const A = "sim:small-model@reforged";
const B = "sim:small-model@bare";
/** `runs` runs of each scenario for one config at one generation; `pass` decides each run. */
const runs = (config: string, generation: number, count: number, pass: (i: number) => boolean, scenarios = ["basic_2step", "error_recovery"]) =>
  scenarios.flatMap((scenario) =>
    Array.from({ length: count }, (_, runIndex) =>
      record({ config, ablation: config.split("@")[1]!, scenario, runIndex, generation, correct: pass(runIndex), ...(pass(runIndex) ? {} : { errorType: "ValidationFailed" }) }),
    ),
  );

let out: string[] = [];
beforeEach(() => {
  out = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void out.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());
const printed = () => out.join("\n");
/** The table row of a config, split into its cells. */
const rowOf = (config: string) => printed().split("\n").find((l) => l.startsWith(`${config} `))?.trim().split(/\s+/);

describe("eval:report over several files", () => {
  it("keeps each config's newest generation, whichever file holds it, and says how many runs were superseded", () => {
    const old = file([...runs(A, 1, 2, () => false), ...runs(B, 1, 2, () => true)]);
    const fresh = file(runs(A, 2, 2, () => true));
    for (const order of [[old, fresh], [fresh, old]]) {
      out = [];
      reportMain(order);
      expect(rowOf(A)!.slice(0, 2)).toEqual([A, "100.0%"]); // gen 2 only: the failing gen-1 runs are gone
      expect(rowOf(B)!.slice(0, 2)).toEqual([B, "100.0%"]); // B has only gen 1: kept
      expect(out[0]).toBe(`superseded: 4 run(s) of older generations left out (${A}: gen 1 → 2, 4 run(s))`);
    }
    expect(printed()).not.toContain("duplicates:");
  });

  it("a key recorded twice at one generation keeps the later record and says how many were dropped", () => {
    const first = file(runs(A, 2, 2, () => false));
    const again = file(runs(A, 2, 2, () => true).filter((r) => r.scenario === "basic_2step"));
    reportMain([first, again]);
    expect(out[0]).toBe("duplicates: 2 run(s) recorded again at the same generation; the later record of each key kept");
    expect(rowOf(A)).toEqual([A, "50.0%", "50.0%", "100.0%", "100%", "0.0", "0.0s", "2", "100", "0"]);
  });

  it("leaves out incomplete configs by default, naming them; --include-partial keeps them", () => {
    const path = file([...runs(A, 2, 3, () => true), ...runs(B, 2, 3, () => true).filter((r) => !(r.scenario === "error_recovery" && r.runIndex === 2))]);
    reportMain([path]);
    expect(out[0]).toBe(`left out 1 incomplete config(s), whose scenarios have unequal run counts (--include-partial keeps them): ${B} (2–3 runs per scenario)`);
    expect(rowOf(A)).toBeDefined();
    expect(rowOf(B)).toBeUndefined();
    out = [];
    reportMain([path, "--include-partial"]);
    expect(printed()).not.toContain("incomplete config");
    expect(rowOf(B)!.slice(0, 8)).toEqual([B, "100.0%", "100.0%", "100.0%", "100%", "0.0", "0.0s", "3"]);
  });

  it("a config that has run only some scenarios, all to the same count, is complete", () => {
    reportMain([file([...runs(A, 2, 2, () => true), ...runs(B, 2, 2, () => true, ["basic_2step"])])]);
    expect(printed()).not.toContain("incomplete config");
    expect(rowOf(B)!.slice(-2)).toEqual(["100", "—"]);
  });

  it("--exclude-scenario drops the scenario from the aggregates and the columns", () => {
    const path = file(runs(A, 2, 2, () => true).map((r) => (r.scenario === "error_recovery" ? { ...r, correct: false, errorType: "ValidationFailed" } : r)));
    reportMain([path, "--exclude-scenario", "error_recovery"]);
    expect(rowOf(A)).toEqual([A, "100.0%", "100.0%", "100.0%", "100%", "0.0", "0.0s", "2", "100"]);
    expect(printed()).toContain("scenarios (score %): b2s=basic_2step\n");
    expect(printed()).not.toContain("error_recovery");
  });

  it("refuses an unknown --exclude-scenario as --scenario does, and a filter that leaves nothing", () => {
    const path = file(runs(A, 2, 1, () => true));
    expect(() => reportMain([path, "--exclude-scenario", "basic_2step", "nope"])).toThrow(expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", message: expect.stringContaining("unknown scenario(s): nope; known: basic_2step") }));
    expect(() => reportMain([path, "--exclude-scenario", "basic_2step", "error_recovery"])).toThrow(/no runs match the filters/);
    const partialOnly = file(runs(B, 2, 2, () => true).slice(1));
    expect(() => reportMain([partialOnly])).toThrow(/every config is incomplete \(--include-partial shows them\)/);
  });

  it("as a person meets it: several files, a missing one exits 2 naming it; --help documents the new flags", async () => {
    const path = file(runs(A, 2, 1, () => true));
    const missing = await cli([path, join(dir, "nope.jsonl")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe(`forge-ts: Invalid results: ${join(dir, "nope.jsonl")} does not exist [FORGE_INVALID_ARGUMENT]`);
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/results\.jsonl \[more\.jsonl \.\.\.\][\s\S]*--exclude-scenario[\s\S]*--include-partial[\s\S]*Exit codes/);
  }, 120_000);
});
