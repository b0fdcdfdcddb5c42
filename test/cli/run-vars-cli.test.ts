/**
 * `forge-ts run --var name=value` / `--vars <file>` fill a workflow's system-prompt placeholders:
 * the README's quick-start workflow (`{team}`) and the shipped demo module (`{company}`). A
 * placeholder without a value, an unknown `--var`, bad syntax and a bad file are refused (exit 2,
 * one line) before a run id is printed or anything is stored. The run records its module,
 * backend and model, so the commands it prints run as printed, with nothing to fill in.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runMain, runsMain } from "../../src/cli/runs.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { builtModule, cliArgs } from "../support/cli.js";
import { inProcess } from "../support/in-process-cli.js";

const exec = promisify(execFile);
const MODULE = "test/cli/fixtures/weather-workflow.ts";
const tmp = () => mkdtempSync(path.join(tmpdir(), "forge-run-vars-"));

/**
 * An environment in which the printed commands start with `forge-ts`: no npm variables (npm did
 * not start the command) and a `forge-ts` on PATH; `npx` marks one that npx started.
 */
function shellEnv(npx = false): NodeJS.ProcessEnv {
  const bin = path.join(tmp(), "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "forge-ts"), "#!/bin/sh\nexit 0\n");
  chmodSync(path.join(bin, "forge-ts"), 0o755);
  const plain = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_") && !k.startsWith("npm_")));
  return { ...plain, NO_COLOR: "1", PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`, ...(npx ? { npm_command: "exec" } : {}) };
}

const cli = (args: string[], env = shellEnv()) => exec(process.execPath, cliArgs("src/cli/main.ts", ...args), { env });

/** The system prompt a stored run started from. */
async function systemPrompt(store: string, runId: string): Promise<string> {
  const checkpoint = await new FileRunStore({ dir: store }).latest(runId);
  return checkpoint!.snapshot.context.messages[0]!.content;
}

/** A printed command, run as printed: the words after its `prefix`. */
const runPrinted = (line: string, prefix: string, env?: NodeJS.ProcessEnv) => {
  expect(line.startsWith(`${prefix} runs `)).toBe(true);
  return cli(line.slice(prefix.length).trim().split(/\s+/), env);
};

describe("forge-ts run --var / --vars (the process)", () => {
  it("refuses the README's workflow without {team} before printing a run id, then runs it with --var", async () => {
    const store = path.join(tmp(), "store");
    const refused = await cli(["run", MODULE, "Is it warm in Lisbon?", "--backend", "sim", "--store", store]).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 2, stdout: "" });
    expect(refused.stderr.trim().split("\n")).toEqual([
      `forge-ts: Invalid --var: workflow "weather" (${builtModule(MODULE)}) has system-prompt placeholders without a value: team; give --var team=<value> (or --vars <file.json>) [FORGE_INVALID_ARGUMENT]`,
    ]);
    expect(await new FileRunStore({ dir: store }).listRuns()).toEqual([]);

    const ran = await cli(["run", MODULE, "Is it warm in Lisbon?", "--backend", "sim", "--store", store, "--run-id", "w1", "--var", "team=ops"]);
    expect(ran.stdout).toBe('run w1\n"Yes: 21 °C in Lisbon."\n');
    expect(await systemPrompt(store, "w1")).toBe("You answer weather questions for ops. Always act through tools.");
  }, 300_000);

  it("runs the shipped demo module with --var company=…; each printed command runs as printed", async () => {
    const store = path.join(tmp(), "store");
    const demoModule = builtModule("src/cli/demo-module.ts");
    const ran = await cli(["run", demoModule, "Prepare a quote for 250 units of part PN-4471 from Acme Fasteners.", "--backend", "sim", "--store", store, "--run-id", "q1", "--var", "company=Globex"]);
    expect(await systemPrompt(store, "q1")).toMatch(/^You are the purchasing assistant of Globex\. /);
    // The quote is above the demo's approval limit: the run waits, and says how to go on.
    const lines = ran.stdout.split("\n");
    expect(lines.slice(0, 2)).toEqual(["run q1", "run q1 is waiting for a person (1 pending):"]);
    const decide = lines.find((l) => l.startsWith("decide: "))!;
    expect(lines).toContain(`then:   forge-ts runs resume q1 --store ${store}`);
    const approve = decide.slice("decide: ".length).split("   or   ")[0]!.replace(" [--args <json>]", "");

    // Started by npx, the commands it prints start with npx too.
    const approved = await runPrinted(approve, "forge-ts", shellEnv(true));
    const next = /continue with: (.+)$/.exec(approved.stdout.trim())![1]!;
    expect(next).toBe(`npx forge-ts runs resume q1 --store ${store}`);
    const resumed = await runPrinted(next, "npx forge-ts");
    expect(JSON.parse(JSON.parse(resumed.stdout) as string)).toMatchObject({ quote_id: "Q-PN-4471-250", total: 85 });
  }, 300_000);
});

describe("forge-ts run --var / --vars (in-process rows)", () => {
  const run = (store: string, ...args: string[]) => inProcess((a) => runMain(a), [MODULE, "Is it warm?", "--backend", "sim", "--store", store, ...args]);
  const file = (text: string) => {
    const at = path.join(tmp(), "vars.json");
    writeFileSync(at, text);
    return at;
  };

  it.each([
    [["--var", "team"], 'Invalid --var: expected name=value, got "team"'],
    [["--var", "=ops"], 'Invalid --var: expected name=value, got "=ops"'],
    [["--var", "team=ops", "--var", "tema=ops"], `Invalid --var: workflow "weather" (${MODULE}) has no placeholder {tema}; its system prompt has {team}`],
    [["--vars", "/nonexistent/vars.json"], "Invalid --vars: cannot read /nonexistent/vars.json: ENOENT"],
    [["--vars", "<not json>"], "is not JSON"],
    [["--vars", "<array>"], 'must hold a JSON object of strings, e.g. {"team": "ops"}; it holds an array'],
    [["--vars", "<number>"], '"team" is 7'],
    [["--vars", "<other>"], "placeholders without a value: team; give --var team=<value>"],
  ])("refuses %j with one line, exit 2, nothing stored", async (args, message) => {
    const store = path.join(tmp(), "store");
    const texts: Record<string, string> = { "<not json>": "{team: ops}", "<array>": '["ops"]', "<number>": '{"team": 7}', "<other>": '{"company": "x"}' };
    const given = args.map((a) => (texts[a] !== undefined ? file(texts[a]) : a));
    const { code, stdout, stderr } = await run(store, ...given);
    expect([code, stdout, stderr.split("\n").length]).toEqual([2, "", 1]);
    expect(stderr).toMatch(/^forge-ts: .* \[FORGE_INVALID_ARGUMENT\]$/);
    expect(stderr).toContain(message);
    expect(await new FileRunStore({ dir: store }).listRuns()).toEqual([]);
  });

  it("--vars fills the prompt, --var wins over it; a file may hold names the prompt does not use", async () => {
    const store = path.join(tmp(), "store");
    expect((await run(store, "--run-id", "f1", "--vars", file('{"team": "from the file", "unused": "x"}'))).code).toBe(0);
    expect(await systemPrompt(store, "f1")).toBe("You answer weather questions for from the file. Always act through tools.");
    expect((await run(store, "--run-id", "f2", "--vars", file('{"team": "from the file"}'), "--var", "team=from=the flag")).code).toBe(0);
    expect(await systemPrompt(store, "f2")).toBe("You answer weather questions for from=the flag. Always act through tools.");
  });

  it("a session's later turns take the prompt its first turn filled: no --var needed, none taken", async () => {
    const store = path.join(tmp(), "store");
    expect((await run(store, "--session", "desk", "--run-id", "t1", "--var", "team=ops")).code).toBe(0);
    expect((await run(store, "--session", "desk", "--run-id", "t2")).code).toBe(0);
    expect(await systemPrompt(store, "t2")).toBe("You answer weather questions for ops. Always act through tools.");
    const again = await run(store, "--session", "desk", "--run-id", "t3", "--var", "team=sales");
    expect([again.code, again.stdout]).toEqual([2, ""]);
    expect(again.stderr).toContain("Invalid --var: session desk continues its conversation, whose system prompt its first turn filled");
  });

  it("runs resume | retry refuse --var and --vars: the run's prompt was filled when it started", async () => {
    const store = path.join(tmp(), "store");
    expect((await run(store, "--run-id", "r1", "--var", "team=ops")).code).toBe(0);
    for (const args of [["resume", "r1", "--var", "team=x"], ["retry", "r1", "--vars", "v.json"]]) {
      const { code, stderr } = await inProcess((a) => runsMain(a), [...args, "--store", store]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^forge-ts: Invalid --va(r|rs): only forge-ts run takes prompt variables: a run's system prompt was filled when it started/);
    }
  });
});
