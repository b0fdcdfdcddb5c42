/**
 * A workflow on @modelcontextprotocol/server-filesystem's tools (stdio): required steps and
 * prerequisites name MCP tools like any other, and the server's refusals (a path outside the
 * allowed directory) reach the model on the tool-error channel.
 */
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { defineTool, toolCallsResponse, Workflow } from "../../src/index.js";
import { WorkflowRunner } from "../../src/runner.js";
import { ScriptedClient } from "../../src/testing.js";
import { mcpTools, type McpToolSet } from "../../src/mcp.js";
import { filesystem } from "./support/mcp-servers.js";

let root: string;
let allowed: string;
let fs: McpToolSet;
beforeAll(async () => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "forge-mcp-fs-")));
  allowed = path.join(root, "allowed");
  (await import("node:fs")).mkdirSync(allowed);
  writeFileSync(path.join(allowed, "notes.txt"), "ship on friday\n");
  writeFileSync(path.join(root, "secret.txt"), "the vault code\n");
  fs = await mcpTools(filesystem(allowed), {
    name: "fs",
    prefix: "fs_",
    allow: ["list_allowed_directories", "read_text_file"],
    prerequisites: { read_text_file: ["fs_list_allowed_directories"] },
  });
});
afterAll(() => fs?.close());

const answer = defineTool({
  name: "answer",
  description: "Give the final answer",
  parameters: z.object({ text: z.string() }),
  prerequisites: ["fs_read_text_file"],
  execute: ({ text }) => ({ text }),
});

describe("a workflow on server-filesystem's tools", () => {
  it("allow keeps two tools; descriptions and schemas come from the server", () => {
    expect(Object.keys(fs.tools)).toEqual(["fs_read_text_file", "fs_list_allowed_directories"]);
    expect(fs.tools.fs_read_text_file!.prerequisites).toEqual(["fs_list_allowed_directories"]);
    expect(fs.tools.fs_read_text_file!.spec.parameters).toMatchObject({ type: "object", required: ["path"] });
    expect(fs.tools.fs_read_text_file!.description).toMatch(/Read the complete contents of a file/);
  });

  it("enforces steps and prerequisites on MCP tools, and feeds the server's errors back to the model", async () => {
    const workflow = new Workflow({
      name: "files",
      tools: { ...fs.tools, answer },
      requiredSteps: ["fs_list_allowed_directories"],
      terminalTool: "answer",
      systemPromptTemplate: "Answer from the files you may read.",
    });
    const client = new ScriptedClient({
      responses: [
        // The terminal tool before the required MCP step: refused, the model is told.
        toolCallsResponse([{ tool: "answer", args: { text: "no idea" }, id: "c1" }]),
        // An MCP tool before its prerequisite (another MCP tool): refused.
        toolCallsResponse([{ tool: "fs_read_text_file", args: { path: path.join(allowed, "notes.txt") }, id: "c2" }]),
        toolCallsResponse([{ tool: "fs_list_allowed_directories", args: {}, id: "c3" }]),
        // Outside the allowed directory: the server answers isError, the model sees it.
        toolCallsResponse([{ tool: "fs_read_text_file", args: { path: path.join(root, "secret.txt") }, id: "c4" }]),
        // Arguments that break the server's schema never reach it.
        toolCallsResponse([{ tool: "fs_read_text_file", args: { path: 42 }, id: "c5" }]),
        toolCallsResponse([{ tool: "fs_read_text_file", args: { path: path.join(allowed, "notes.txt") }, id: "c6" }]),
        toolCallsResponse([{ tool: "answer", args: { text: "ship on friday" }, id: "c7" }]),
      ],
    });
    const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 16_384 }), maxIterations: 10 });
    expect(await runner.run(workflow, "When do we ship?")).toEqual({ text: "ship on friday" });

    // The result of the previous request's call, as the next request carries it.
    const toolMessage = (request: number) => client.requests[request]!.messages.filter((m) => m.role === "tool").at(-1)?.content;
    expect(toolMessage(1)).toMatch(/^\[StepEnforcementError\] "answer" cannot run yet: .*Call "fs_list_allowed_directories" next/);
    expect(toolMessage(2)).toMatch(/^\[PrereqError\] "fs_read_text_file" needs these calls to succeed first: fs_list_allowed_directories/);
    expect(toolMessage(3)).toBe(JSON.stringify({ content: `Allowed directories:\n${allowed}` }));
    expect(toolMessage(4)).toBe(
      `[ToolError] fs_read_text_file: Access denied - path outside allowed directories: ${path.join(root, "secret.txt")} not in ${allowed}`,
    );
    expect(toolMessage(5)).toMatch(/Invalid arguments for "fs_read_text_file":\n- path: must be string/);
    expect(toolMessage(6)).toBe(JSON.stringify({ content: "ship on friday\n" }));
    const stats = runner.lastRunStats!;
    expect(stats.toolErrors).toBe(1);
    // Every model call saw the server's tools with their schemas.
    expect(client.requests[0]!.tools!.map((t) => t.name)).toEqual(["fs_read_text_file", "fs_list_allowed_directories", "answer"]);
  });
});
