/**
 * The eval commands refuse what would otherwise fail late or select nothing: an --out in a
 * directory that does not exist, an unknown tag, ablation or scenario, a negative count. One
 * line, exit 2, naming what is valid. The flag checks run in-process; one child process shows
 * the exit code and the one line a person sees.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { count, outFile, parseFlags } from "../../eval/cli/args.js";
import { batchMain } from "../../eval/cli/batch.js";
import { reportMain } from "../../eval/cli/report.js";
import { evalMain } from "../../eval/cli/run.js";
import { assertTags, selectScenarios } from "../../eval/scenarios/index.js";
import { cliArgs } from "../support/cli.js";

const exec = promisify(execFile);

describe("eval flags", () => {
  it("--out must be in a directory that exists", () => {
    expect(() => outFile("/nonexistent/x.jsonl")).toThrow("Invalid --out: cannot write /nonexistent/x.jsonl: the directory /nonexistent does not exist");
    expect(() => outFile(".")).toThrow("is a directory");
    expect(outFile("results.jsonl")).toBe("results.jsonl");
  });

  it("a count must be positive, negative numbers included in either spelling", () => {
    for (const argv of [["--runs", "-1"], ["--runs=-1"]]) expect(() => count(parseFlags(argv, { runs: "one" }), "runs", 5)).toThrow("Invalid --runs: must be a positive integer, got -1");
  });

  it("unknown tags and scenarios are refused naming the known ones", () => {
    expect(() => assertTags(["plumbing", "nope"])).toThrow(/unknown tag\(s\): nope; known: plumbing, .*human/);
    expect(() => selectScenarios({ tags: ["nope"] })).toThrow("unknown tag(s): nope");
    expect(() => selectScenarios({ names: ["nope"] })).toThrow("unknown scenario(s): nope");
  });

  it.each([
    ["eval --tags", () => evalMain(["--runs", "1", "--tags", "plumbng"]), "unknown tag(s): plumbng"],
    ["eval --ablation", () => evalMain(["--runs", "1", "--ablation", "barre"]), 'unknown preset "barre"; use one of reforged'],
    ["eval --scenario", () => evalMain(["--runs", "1", "--scenario", "nope"]), "unknown scenario(s): nope"],
    ["eval --runs -1", () => evalMain(["--runs", "-1"]), "--runs: must be a positive integer, got -1"],
    ["eval --out", () => evalMain(["--runs", "1", "--out", "/nonexistent/x"]), "cannot write /nonexistent/x"],
    ["eval-batch --ablation", () => batchMain(["--config", "sim", "--ablation", "barre"]), 'unknown preset "barre"'],
    ["eval-batch --out", () => batchMain(["--config", "sim", "--out", "/nonexistent/x"]), "cannot write /nonexistent/x"],
    ["eval-batch --runs -2", () => batchMain(["--config", "sim", "--runs=-2"]), "--runs: must be a positive integer, got -2"],
    ["report --tags", () => reportMain(["x.jsonl", "--tags", "nope"]), "unknown tag(s): nope"],
    ["report --ablation", () => reportMain(["x.jsonl", "--ablation", "nope"]), 'unknown preset "nope"'],
  ])("%s is refused before any run", async (_name, main, message) => {
    await expect(Promise.resolve().then(main)).rejects.toThrow(expect.objectContaining({ code: "FORGE_INVALID_ARGUMENT", message: expect.stringContaining(message) }));
  });

  it("npm run eval:batch -- --out /nonexistent/x: one line, exit 2, no stack", async () => {
    const error = (await exec(process.execPath, cliArgs("eval/cli/batch.ts", "--config", "sim", "--runs", "1", "--out", "/nonexistent/x")).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr.trim().split("\n")).toEqual(["forge-ts: Invalid --out: cannot write /nonexistent/x: the directory /nonexistent does not exist [FORGE_INVALID_ARGUMENT]"]);
  }, 120_000);
});
