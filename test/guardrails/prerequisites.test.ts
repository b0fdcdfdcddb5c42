import { describe, expect, it } from "vitest";
import { describePrerequisite, findPrerequisiteViolations, isPrerequisiteMet } from "../../src/guardrails/prerequisites.js";
import type { CompletedStep } from "../../src/guardrails/step-enforcer.js";

describe("isPrerequisiteMet", () => {
  const completed: CompletedStep[] = [
    { tool: "read", args: { path: "a.txt", mode: "r", opts: { enc: "utf8", bom: false } } },
    { tool: "list", args: {} },
  ];
  it("by name: any completed run of that tool", () => {
    expect(isPrerequisiteMet("read", {}, completed)).toBe(true);
    expect(isPrerequisiteMet("write", {}, completed)).toBe(false);
  });
  it('"$x" must deep-equal this call\'s x', () => {
    const p = { tool: "read", args: { path: "$path" } };
    expect(isPrerequisiteMet(p, { path: "a.txt" }, completed)).toBe(true);
    expect(isPrerequisiteMet(p, { path: "b.txt" }, completed)).toBe(false);
    expect(isPrerequisiteMet({ tool: "read", args: { opts: "$o" } }, { o: { bom: false, enc: "utf8" } }, completed)).toBe(true);
  });
  it("other values must match literally (deep)", () => {
    expect(isPrerequisiteMet({ tool: "read", args: { mode: "r" } }, {}, completed)).toBe(true);
    expect(isPrerequisiteMet({ tool: "read", args: { mode: "w" } }, {}, completed)).toBe(false);
    expect(isPrerequisiteMet({ tool: "read", args: { opts: { enc: "utf8", bom: false } } }, {}, completed)).toBe(true);
    expect(isPrerequisiteMet({ tool: "read", args: { path: "$path", mode: "r" } }, { path: "a.txt" }, completed)).toBe(true);
    expect(isPrerequisiteMet({ tool: "read", args: { path: "$path", mode: "w" } }, { path: "a.txt" }, completed)).toBe(false);
  });
  it("{tool} without args behaves like the name", () => {
    expect(isPrerequisiteMet({ tool: "list" }, {}, completed)).toBe(true);
    expect(isPrerequisiteMet({ tool: "list", args: { dir: "$dir" } }, { dir: "x" }, completed)).toBe(false);
  });
});

describe("describePrerequisite / findPrerequisiteViolations", () => {
  const tools = {
    edit: { prerequisites: [{ tool: "read", args: { path: "$path" } }, "list"] },
    read: { prerequisites: [] },
  };
  it("describes arg-matched prerequisites with resolved values", () => {
    expect(describePrerequisite("list", {})).toBe("list");
    expect(describePrerequisite({ tool: "read", args: { path: "$path", n: 2 } }, { path: "a" })).toBe('read(path="a", n=2)');
  });
  it("reports every violating call with what is missing, against pre-batch state", () => {
    const calls = [
      { tool: "read", args: { path: "a" } },
      { tool: "edit", args: { path: "a" } },
      { tool: "unknown", args: {} },
    ];
    expect(findPrerequisiteViolations(calls, tools, [])).toEqual([{ index: 1, tool: "edit", missing: ['read(path="a")', "list"] }]);
    expect(findPrerequisiteViolations(calls, tools, [{ tool: "read", args: { path: "a" } }])).toEqual([{ index: 1, tool: "edit", missing: ["list"] }]);
    expect(findPrerequisiteViolations(calls, tools, [{ tool: "read", args: { path: "a" } }, { tool: "list", args: {} }])).toEqual([]);
  });
});
