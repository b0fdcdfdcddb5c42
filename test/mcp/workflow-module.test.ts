/** How `forge-ts run` finds a module's Workflow now that it may build one from MCP servers' tools. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/index.js";
import { loadWorkflow } from "../../src/cli/workflow-module.js";

const read = defineTool({ name: "read_text_file", description: "read", parameters: z.object({ path: z.string() }), execute: () => "text" });

describe("loadWorkflow with createWorkflow", () => {
  it("calls createWorkflow with the servers' tools", async () => {
    const workflow = await loadWorkflow("test/mcp/fixtures/files-workflow.ts", { mcpTools: { read_text_file: read }, mcpServers: {} });
    expect(workflow.toolNames).toEqual(["read_text_file", "answer"]);
    expect(workflow.requiredSteps).toEqual(["read_text_file"]);
  });

  it("without servers: a Workflow export as before, else createWorkflow with empty records", async () => {
    expect((await loadWorkflow("test/cli/fixtures/note-workflow.ts")).name).toBe("notes");
    await expect(loadWorkflow("test/mcp/fixtures/files-workflow.ts")).rejects.toThrow("no read_text_file tool among");
  });

  it("servers named for a module without createWorkflow is a usage error", async () => {
    await expect(loadWorkflow("test/cli/fixtures/note-workflow.ts", { mcpTools: {}, mcpServers: {} })).rejects.toThrow(
      /Invalid --mcp: .*must export createWorkflow/,
    );
  });
});
