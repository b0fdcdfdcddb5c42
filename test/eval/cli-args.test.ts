import { describe, expect, it } from "vitest";
import { int, many, one, parseFlags } from "../../eval/cli/args.js";
import { createProgress, progressLine } from "../../eval/progress.js";
import { record } from "./fixtures.js";

describe("parseFlags", () => {
  const spec = { runs: "one", scenario: "many", stream: "bool" } as const;
  it("reads single values, lists up to the next flag, booleans and positionals", () => {
    const p = parseFlags(["file.jsonl", "--scenario", "a", "b", "--stream", "--runs=5"], spec);
    expect(p.positional).toEqual(["file.jsonl"]);
    expect(many(p, "scenario")).toEqual(["a", "b"]);
    expect(p.flags.stream).toBe(true);
    expect(int(p, "runs", 1)).toBe(5);
    expect(one(p, "missing")).toBeUndefined();
  });
  it("rejects unknown flags, missing values and bad integers", () => {
    expect(() => parseFlags(["--nope"], spec)).toThrow(/unknown flag/);
    expect(() => parseFlags(["--runs"], spec)).toThrow(/needs a value/);
    expect(() => int(parseFlags(["--runs", "x"], spec), "runs", 1)).toThrow(/non-negative integer/);
  });
});

describe("progress", () => {
  it("draws runs done, pass rate and ETA", () => {
    expect(progressLine(5, 10, 4, 5000, 10)).toBe("[#####-----] 5/10  pass 80%  ETA 5s");
    expect(progressLine(0, 10, 0, 0, 10)).toContain("ETA ?");
  });
  it("redraws one line on a TTY and prints plain lines otherwise", () => {
    const chunks: string[] = [];
    const out = { write: (s: string) => chunks.push(s) } as unknown as NodeJS.WritableStream;
    const tty = createProgress({ total: 2, out, tty: true, now: () => 0 });
    tty.tick(record());
    tty.done();
    expect(chunks[0]).toMatch(/^\r\[/);
    chunks.length = 0;
    const plain = createProgress({ total: 2, out, tty: false });
    plain.tick(record({ correct: false, errorType: "ToolCallError" }));
    expect(chunks[0]).toBe("[1/2] sim:small-model@reforged basic_2step#0 FAIL ToolCallError it=2 (pass 0%)\n");
  });
});
