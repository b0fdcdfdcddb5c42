import { describe, expect, it } from "vitest";
import { intFlag, nonNegativeInt, positiveInt } from "../../src/cli-kit/int-flag.js";
import { joinNegativeValues, parseCliArgs } from "../../src/cli/parse-cli-args.js";
import { workerMain } from "../../src/cli/worker.js";

const options = { runs: { type: "string" }, quiet: { type: "boolean" } } as const;

describe("parseCliArgs", () => {
  it("takes a negative number as a string flag's value, in both spellings", () => {
    expect(parseCliArgs({ args: ["--runs", "-1"], options }).values.runs).toBe("-1");
    expect(parseCliArgs({ args: ["--runs=-1"], options }).values.runs).toBe("-1");
    expect(joinNegativeValues(["--quiet", "-1", "--runs", "-2.5", "--runs", "-x"], options)).toEqual(["--quiet", "-1", "--runs=-2.5", "--runs", "-x"]);
  });

  it("is strict: an unknown flag is a parseArgs usage error", () => {
    expect(() => parseCliArgs({ args: ["--nope"], options })).toThrow(expect.objectContaining({ code: "ERR_PARSE_ARGS_UNKNOWN_OPTION" }));
  });

  it("a command says what a negative count must be, not that it is ambiguous", async () => {
    for (const args of [["--concurrency", "-2"], ["--concurrency=-2"]]) {
      await expect(workerMain(["--redis", "redis://127.0.0.1:1", "--eval", "sim", ...args])).rejects.toThrow("Invalid --concurrency: must be a positive integer, got -2");
    }
  });
});

describe("integer flags", () => {
  it("name the flag, the bound and the value as given", () => {
    expect(positiveInt("runs", undefined, 5)).toBe(5);
    expect(positiveInt("runs", "3", 5)).toBe(3);
    expect(() => positiveInt("runs", "-1", 5)).toThrow("Invalid --runs: must be a positive integer, got -1");
    expect(() => positiveInt("runs", "0", 5)).toThrow("must be a positive integer, got 0");
    expect(() => nonNegativeInt("seed", "1.5", 0)).toThrow("Invalid --seed: must be a non-negative integer, got 1.5");
    expect(() => nonNegativeInt("seed", "", 0)).toThrow("got ");
    expect(() => intFlag("port", "70000", { min: 0, max: 65_535 })).toThrow("Invalid --port: must be an integer from 0 to 65535, got 70000");
  });
});
