import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openResults, parseRecords, readRecords, resumeKey } from "../../eval/run-record.js";
import { record } from "./fixtures.js";

const tmp = () => mkdtempSync(join(tmpdir(), "forge-eval-"));

describe("run records (JSONL)", () => {
  it("builds the stable resume key", () => {
    expect(resumeKey("sim:small-model@bare", "basic_2step", 3)).toBe("sim:small-model@bare|basic_2step|3");
  });

  it("appends one line per record and reads them back", () => {
    const path = join(tmp(), "r.jsonl");
    const file = openResults(path);
    expect(file.records).toEqual([]);
    file.append(record({ runIndex: 0 }));
    file.append(record({ runIndex: 1, correct: false, errorType: "ToolCallError" }));
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(3);
    expect(readRecords(path).map((r) => r.key)).toEqual(["sim:small-model@reforged|basic_2step|0", "sim:small-model@reforged|basic_2step|1"]);
  });

  it("cuts a partial last line left by a killed writer, and says so", () => {
    const path = join(tmp(), "r.jsonl");
    const good = JSON.stringify(record());
    writeFileSync(path, `${good}\n{"key":"sim:small-mo`);
    const logs: string[] = [];
    const file = openResults(path, (l) => logs.push(l));
    expect(file.records).toHaveLength(1);
    expect(logs[0]).toMatch(/partial last line/);
    expect(readFileSync(path, "utf8")).toBe(`${good}\n`);
  });

  it("a line written before generations, validator errors and reasoning counts still parses, as generation 1", () => {
    // A record as the harness wrote it before those fields existed (no generation, no reasoningMessages).
    const old = `{"key":"sim:small-model@bare|basic_2step|0","config":"sim:small-model@bare","backend":"sim","model":"small-model","ablation":"bare","scenario":"basic_2step","tags":["plumbing"],"runIndex":0,"seed":1733,"completed":true,"correct":false,"iterations":3,"idealIterations":2,"wastedCalls":1,"elapsedMs":4.2,"compactions":0,"compactionPhases":[],"streamRetries":0,"inputTokens":410,"outputTokens":52,"retryNudges":0,"stepNudges":1,"prereqNudges":0,"rescues":0,"toolErrors":0,"errorType":"ValidationFailed","injectedFaults":[],"timestamp":"2026-03-01T10:00:00.000Z"}`;
    const [r] = parseRecords(`${old}\n`, "old.jsonl");
    expect(r).toMatchObject({ generation: 1, reasoningMessages: 0, correct: false, errorType: "ValidationFailed" });
    expect(r!.validationError).toBeUndefined();
  });

  it("writes and reads back the generation, a validator error and the reasoning count", () => {
    const path = join(tmp(), "r.jsonl");
    const written = record({ generation: 7, correct: false, validationError: "TypeError: boom", errorType: "ValidationError", reasoningMessages: 4 });
    openResults(path).append(written);
    expect(readRecords(path)).toEqual([written]);
    expect(() => parseRecords(`${JSON.stringify({ ...written, generation: 0 })}\n`, "x.jsonl")).toThrow(/x\.jsonl:1 is not a run record/);
  });

  it("fails loudly on a malformed line in the middle", () => {
    expect(() => parseRecords(`${JSON.stringify(record())}\nnot json\n`, "x.jsonl")).toThrow(/x\.jsonl:2 is not JSON/);
    expect(() => parseRecords(`{"key":"k"}\n`, "x.jsonl")).toThrow(/x\.jsonl:1 is not a run record/);
  });
});
