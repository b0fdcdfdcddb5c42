import { describe, expect, it } from "vitest";
import { z } from "zod";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { defineTool, Workflow } from "../../src/index.js";
import { promptPlaceholders, workflowDescription } from "../../src/mcp-server/workflow-description.js";
import { workflowInput } from "../../src/mcp-server/workflow-input.js";

const tool = (name: string) => defineTool({ name, description: name, parameters: z.object({}), execute: () => name });
const notes = new Workflow({
  name: "notes",
  tools: { remember: tool("remember"), lookup: tool("lookup"), reply: tool("reply") },
  requiredSteps: ["remember"],
  terminalTool: "reply",
  systemPromptTemplate: "You keep notes for {user} at {company}, in {user}'s words.",
});

describe("workflowDescription", () => {
  it("names the tools, required steps and terminal tool when the workflow has no description", () => {
    expect(workflowDescription(notes)).toBe(
      'Runs the forge-ts workflow "notes" on a local model: it works with the tools remember, lookup and reply, must first ' +
        'succeed at remember, and ends with reply, whose result this tool returns. Give the task in plain words as "task". ' +
        'promptVars must give "user" and "company". Each call is a durable run; its id comes back in the result.',
    );
  });

  it("starts with the workflow's own description when it has one", () => {
    const { workflow } = supplierQuoteWorkflow();
    expect(workflowDescription(workflow)).toMatch(/^Prepare a supplier quote from catalog data, public pricing and order history\. Give the task .* promptVars must give "company"\./);
  });

  it("lists each placeholder once", () => {
    expect(promptPlaceholders(notes)).toEqual(["user", "company"]);
  });
});

describe("workflowInput", () => {
  it("takes a task, and optionally a session and prompt values (strings)", () => {
    const input = workflowInput(notes);
    expect(input.parse({ task: "Remember the milk" })).toEqual({ task: "Remember the milk" });
    expect(input.parse({ task: "t", sessionId: "s1", promptVars: { user: "Ann" } })).toEqual({ task: "t", sessionId: "s1", promptVars: { user: "Ann" } });
    expect(input.safeParse({}).success).toBe(false);
    expect(input.safeParse({ task: "" }).success).toBe(false);
    expect(input.safeParse({ task: "t", promptVars: { user: 1 } }).success).toBe(false);
    expect(input.shape.promptVars.description).toContain("user, company");
  });
});
