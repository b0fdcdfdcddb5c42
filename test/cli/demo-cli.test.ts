import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { demoMain } from "../../src/cli/demo.js";
import { runsMain } from "../../src/cli/runs.js";
import { resetSamplingInfoLog } from "../../src/models/sampling.js";
import { cliArgs } from "../support/cli.js";
import { inProcess } from "../support/in-process-cli.js";
import { REFUSED_URL } from "../support/refused-url.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
/**
 * The demo as a child process: built (support/cli.ts), or with `viaTsx` as `npm start` runs it
 * (`tsx src/cli/demo.ts`, on the sources). The first test below is the suite's only spawn through
 * tsx, so that path stays covered without paying its start-up on every other spawn.
 */
const demo = (args: string[], viaTsx = false) =>
  run(process.execPath, viaTsx ? ["--import", "tsx", "src/cli/demo.ts", ...args] : cliArgs("src/cli/demo.ts", ...args), { env: { ...env, NO_COLOR: "1" } });

describe("npm start (src/cli/demo.ts)", () => {
  it("runs the supplier quote on the simulated model, printing transitions, rescue, nudge and result", async () => {
    const { stdout } = await demo([], true);
    expect(stdout).toContain("→ compacting");
    expect(stdout).toContain("→ executingTools.running");
    // Eventless steps print too: the first turn walks the whole chain.
    // (A batch no person decides starts its first call at once; its last call settles it.)
    const states = stdout.split("\n").filter((l) => l.startsWith("→ ")).slice(0, 6);
    expect(states).toEqual(["→ inferring", "→ validating", "→ enforcingSteps", "→ checkingPrereqs", "→ executingTools.running", "→ executingTools.settling"]);
    expect(stdout).toMatch(/rescue +↳ the model wrote that call as text/);
    expect(stdout).toContain("[StepEnforcementError]");
    expect(stdout).toMatch(/result +submit_quote/);
    expect(stdout).toMatch(/"unit_price": ?0\.34/);
    // The quote (85 USD) is above the approval limit: the run waits for a person, who the demo plays.
    const approval = stdout.split("\n").findIndex((l) => l.startsWith("  human "));
    expect(stdout.split("\n")[approval]).toBe(
      '  human   submit_quote {part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 250, unit_price: 0.34} → approved (demo auto-approves; see docs/runner.md "Human in the loop")',
    );
    expect(stdout.split("\n").slice(approval - 2, approval)).toEqual(["→ awaitingHuman", '  call    submit_quote({"part_number":"PN-4471","supplier":"Acme Fasteners","quantity":250,"unit_price":0.34})']);
    expect(stdout.match(/^ {2}human /gm)).toHaveLength(1);
  }, 300_000);

  it("--interactive without a terminal on stdin approves by itself and says why", async () => {
    const { stdout } = await demo(["--interactive"]);
    expect(stdout).toContain("note    --interactive needs a terminal on stdin; approvals are automatic");
    expect(stdout).toMatch(/human +submit_quote \{.*\} → approved \(demo auto-approves/);
    expect(stdout).toMatch(/"unit_price": ?0\.34/);
  }, 300_000);

  it("streams deltas with --stream and still prints the result", async () => {
    const { stdout } = await demo(["--stream", "--seed", "6"]);
    // Reasoning, text and each call's arguments each get their own labeled line.
    expect(stdout).toMatch(/\n {2}stream think +The user wants/);
    expect(stdout).toMatch(/\n {2}stream args #0 lookup_part \{"part_number":"PN-4471"\}\n/);
    expect(stdout).toMatch(/\n {2}stream args #1 check_inventory \{"part_number":"PN-4471"\}\n/);
    expect(stdout).toMatch(/"unit_price": ?0\.34/);
  }, 300_000);

  it("rejects an unknown backend with exit code 2 and a clear message", async () => {
    const error = await demo(["--backend", "gpt5"]).catch((e: unknown) => e as { code: number; stderr: string });
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain('unknown backend "gpt5"');
  }, 300_000);

  it("fails with exit code 1 and the typed error when the backend is unreachable", async () => {
    const error = await demo(["--backend", "ollama", "--model", "qwen3:8b", "--base-url", REFUSED_URL, "--budget", "4096"]).catch(
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(error).toMatchObject({ code: 1 });
    expect((error as { stderr: string }).stderr).toMatch(new RegExp(`backend ollama qwen3:8b at ${REFUSED_URL} is unreachable: .*FORGE_BACKEND`));
  }, 300_000);

  it("exits 2 on a bad flag with one line on stderr (the process)", async () => {
    const error = (await demo(["--frobnicate"]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr.trim().split("\n")).toHaveLength(1);
    expect(error.stderr).toContain("frobnicate");
    expect(error.stderr).not.toContain("TypeError");
  }, 300_000);

  it.each([
    [["--timeout", "0"], "--timeout"],
    [["--timeout", "soon"], "--timeout"],
    [["--seed", "-1"], "--seed"],
    // The simulated model's --model is a profile name: the CLI cannot pass a FaultProfile object.
    [["--model", "nope"], 'Invalid --model: the simulated model (--backend sim) takes a fault profile as its model: clean, small-model, chaotic; got "nope"'],
    [["--recommended-sampling"], "Invalid --recommended-sampling: the simulated model has no sampling to set"],
    [["--backend", "ollama", "--model", "mystery:1b", "--recommended-sampling", "--base-url", REFUSED_URL], 'forge-ts knows no model-card sampling values for "mystery:1b"; leave the flag out'],
    [["--backend", "openai", "--model", "m", "--recommended-sampling", "--base-url", REFUSED_URL], "the openai backend takes no model-card sampling values"],
  ])("exits 2 on bad flags %j", async (args, message) => {
    const { code, stderr } = await inProcess((a) => demoMain(a), args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).not.toContain("TypeError");
    expect(stderr).not.toContain("FaultProfile object");
  });

  it("the model card's sampling hint names the flag that exists; given, the flag leaves nothing to hint", async () => {
    const args = ["--backend", "ollama", "--model", "qwen3:8b", "--base-url", REFUSED_URL];
    resetSamplingInfoLog();
    const hinted = await inProcess((a) => demoMain(a), args);
    expect(hinted.code).toBe(1); // nothing answers at REFUSED_URL
    expect(hinted.stderr).toMatch(/Recommended sampling values exist for "qwen3:8b" .*; to use them, pass recommendedSampling: true \(forge-ts commands: --recommended-sampling\)/);
    resetSamplingInfoLog();
    const given = await inProcess((a) => demoMain(a), [...args, "--recommended-sampling"]);
    expect(given.code).toBe(1);
    expect(given.stderr).not.toContain("Recommended sampling values exist");
  });
});

describe("forge-ts command (src/cli/main.ts)", () => {
  const cli = (args: string[]) => run(process.execPath, cliArgs("src/cli/main.ts", ...args), { env: { ...env, NO_COLOR: "1" } });
  it("prints its version and runs the demo subcommand", async () => {
    expect((await cli(["--version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await cli(["demo", "--quiet"])).stdout).toMatch(/"unit_price": ?0\.34/);
  }, 300_000);
  it("runs the eval harness and its report, with its own name in usage lines", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "forge-eval-cli-"));
    const out = path.join(dir, "results.jsonl");
    expect((await cli(["eval", "--help"])).stdout).toMatch(/^usage: forge-ts eval /);
    expect((await cli(["demo", "--help"])).stdout).toMatch(/^Usage: forge-ts demo /);
    expect((await cli(["report", "--help"])).stdout).toMatch(/^usage: forge-ts report /);
    expect((await cli(["eval-batch", "--help"])).stdout).toMatch(/^usage: forge-ts eval-batch /);
    const evaluated = await cli(["eval", "--backend", "sim", "--runs", "1", "--scenario", "basic_2step", "--out", out]);
    expect(evaluated.stdout).toMatch(/sim:small-model@reforged +100\.0% .* 1 +100$/m);
    expect((await cli(["report", out, "--list-only"])).stdout).toContain("1. sim:small-model@reforged");
    await expect(cli(["report", path.join(dir, "missing.jsonl")])).rejects.toMatchObject({ code: 2 });
  }, 300_000);
  it("rejects an unknown command with exit code 2", async () => {
    await expect(cli(["fly"])).rejects.toMatchObject({ code: 2 });
  }, 300_000);
  it("no command: the usage on stderr and exit 2 (--help: on stdout, exit 0)", async () => {
    const bare = await cli([]).catch((e: unknown) => e as { code: number; stdout: string; stderr: string });
    expect(bare).toMatchObject({ code: 2, stdout: "" });
    expect((bare as { stderr: string }).stderr).toMatch(/^Usage: forge-ts <command> \[options\]\n/);
    expect((await cli(["--help"])).stdout).toMatch(/^Usage: forge-ts <command> \[options\]\n/);
    const runs = await inProcess((a) => runsMain(a), []);
    expect(runs).toMatchObject({ code: 2, stdout: "", stderr: expect.stringMatching(/^Usage: forge-ts runs /) });
  }, 300_000);
});
