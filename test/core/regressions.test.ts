/** Bugs found by review, each pinned by the input that exposed it. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, describeError, errorToJSON, reviveError, ToolDefinitionError, Workflow, WorkflowDefinitionError } from "../../src/core/index.js";

const a = defineTool({ name: "a", description: "", parameters: z.object({}), execute: () => "a" });

describe("src/core regressions", () => {
  it("inherited property names are not tools", () => {
    expect(() => new Workflow({ name: "w", tools: { a }, requiredSteps: ["toString"], terminalTool: "a" })).toThrow(WorkflowDefinitionError);
    expect(() => new Workflow({ name: "w", tools: { a }, terminalTool: "constructor" })).toThrow(WorkflowDefinitionError);
    const wf = new Workflow({ name: "w", tools: { a }, terminalTool: "a" });
    expect(() => wf.getTool("constructor")).toThrow(WorkflowDefinitionError);
  });

  it("two tools may share a JSON Schema $id", () => {
    const schema = () => ({ $id: "https://example.test/args", type: "object", properties: { q: { type: "string" } } });
    expect(() => {
      defineTool({ name: "x", description: "", jsonSchema: schema(), execute: () => 1 });
      defineTool({ name: "y", description: "", jsonSchema: schema(), execute: () => 1 });
    }).not.toThrow();
  });

  it("prerequisites must be an array", () => {
    const bad = (prerequisites: unknown) => () =>
      defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => 1, prerequisites: prerequisites as string[] });
    expect(bad("abc")).toThrow(ToolDefinitionError);
    expect(bad(5)).toThrow(ToolDefinitionError);
  });

  it("reviveError ignores inherited codes", () => {
    const revived = reviveError({ name: "X", code: "constructor", message: "m", data: { k: 1 } });
    expect(revived).toBeInstanceOf(Error);
    expect(revived.message).toBe("m");
  });

  it("values that refuse String() are still described", () => {
    const odd = Object.create(null) as object;
    expect(describeError(odd)).toBe("[object Object]");
    expect(errorToJSON(odd).message).toBe("[object Object]");
  });

  it("raw JSON Schema issues name nested missing fields with a dotted, unescaped path", () => {
    const t = defineTool({
      name: "t",
      description: "",
      jsonSchema: { type: "object", properties: { addr: { type: "object", required: ["zip"] }, "a/b": { type: "string" } } },
      execute: () => 1,
    });
    const nested = t.validateArgs({ addr: {} });
    expect(nested.ok ? [] : nested.issues.map((i) => i.path)).toEqual(["addr.zip"]);
    const escaped = t.validateArgs({ "a/b": 3 });
    expect(escaped.ok ? [] : escaped.issues.map((i) => i.path)).toEqual(["a/b"]);
  });
});
