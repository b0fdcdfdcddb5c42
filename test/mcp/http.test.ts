/**
 * mcpTools over Streamable HTTP against an McpServer built here: headers, cancellation seen by
 * the server, and tools/list_changed — existing tools updated in place (the model sees the new
 * description at its next inference), removed ones failing as tool errors, new ones reported.
 */
import type { RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { defineTool, McpServerError, McpToolError, toolCallsResponse, Workflow } from "../../src/index.js";
import { WorkflowRunner } from "../../src/runner.js";
import { ScriptedClient } from "../../src/testing.js";
import { mcpTools, type McpToolsChange, type McpToolSet } from "../../src/mcp.js";
import { callContext, startHttpMcpServer, type HttpMcp } from "./support/mcp-servers.js";

let server: HttpMcp | undefined;
let set: McpToolSet | undefined;
afterEach(async () => {
  await set?.close();
  await server?.close();
  set = server = undefined;
});

/** Resolves with the next change the set reports. */
function changes() {
  const seen: McpToolsChange[] = [];
  let wake: (() => void) | undefined;
  return {
    onToolsChanged: (c: McpToolsChange) => {
      seen.push(c);
      wake?.();
    },
    next: async (): Promise<McpToolsChange> => {
      while (seen.length === 0) await new Promise<void>((r) => (wake = r));
      return seen.shift()!;
    },
  };
}

describe("mcpTools over Streamable HTTP", () => {
  it("sends the headers, calls tools and maps their results", async () => {
    server = await startHttpMcpServer((s) => {
      s.registerTool("weather", { description: "Weather of a city", inputSchema: { city: z.string() }, outputSchema: { celsius: z.number() } }, async ({ city }) => ({
        content: [{ type: "text", text: `{"celsius":${city.length}}` }],
        structuredContent: { celsius: city.length },
      }));
    });
    set = await mcpTools({ url: server.url, headers: { authorization: "Bearer t0ken" } }, { name: "http" });
    expect(set.serverInfo).toEqual({ name: "test-http", version: "1.0.0" });
    expect(await set.tools.weather!.execute({ city: "Oslo" }, callContext())).toEqual({ celsius: 4 });
    expect(server.headers.length).toBeGreaterThan(1);
    expect(server.headers.every((h) => h.authorization === "Bearer t0ken")).toBe(true);
  });

  it("an aborted call sends MCP's cancellation: the server's handler sees its signal abort", async () => {
    let serverSaw: string | undefined;
    let running!: () => void;
    const handlerRunning = new Promise<void>((resolve) => (running = resolve));
    server = await startHttpMcpServer((s) => {
      s.registerTool("slow", { description: "Takes forever", inputSchema: {} }, (_args, extra) =>
        new Promise((resolve) => {
          running();
          extra.signal.addEventListener("abort", () => {
            serverSaw = String(extra.signal.reason);
            resolve({ content: [{ type: "text", text: "cut short" }] });
          });
        }),
      );
    });
    set = await mcpTools({ url: server.url });
    const controller = new AbortController();
    const call = Promise.resolve(set.tools.slow!.execute({}, callContext("r", controller.signal)));
    await handlerRunning; // the call reached the server: there is something to cancel
    controller.abort(new Error("deadline"));
    await expect(call).rejects.toThrow("deadline");
    expect(await vi.waitUntil(() => serverSaw, { timeout: 30_000, interval: 5 })).toMatch(/deadline/);
  });

  it("tools/list_changed: updates in place, withdraws removed tools, reports new ones", async () => {
    const registered: Record<string, RegisteredTool> = {};
    server = await startHttpMcpServer((s) => {
      registered.greet = s.registerTool("greet", { description: "Greets", inputSchema: { name: z.string() } }, ({ name }) => ({ content: [{ type: "text", text: `hi ${name}` }] }));
      registered.gone = s.registerTool("gone", { description: "Soon removed", inputSchema: {} }, () => ({ content: [{ type: "text", text: "here" }] }));
    });
    const seen = changes();
    set = await mcpTools({ url: server.url }, { prefix: "h_", onToolsChanged: seen.onToolsChanged });
    const record = set.tools;
    const greet = record.h_greet!;
    expect(greet.validateArgs({ name: "Ada" }).ok).toBe(true);

    registered.greet!.update({ description: "Greets politely", paramsSchema: { name: z.string(), title: z.string() } });
    expect(await seen.next()).toEqual({ server: server.url, added: [], removed: [], changed: ["h_greet"], skipped: [] });
    expect(set.tools).toBe(record);
    expect(record.h_greet).toBe(greet);
    expect(greet.description).toBe("Greets politely");
    expect(greet.spec.parameters).toMatchObject({ required: ["name", "title"] });
    expect(greet.validateArgs({ name: "Ada" }).ok).toBe(false);

    registered.gone!.remove();
    expect(await seen.next()).toMatchObject({ removed: ["h_gone"] });
    expect(set.removed).toEqual(["h_gone"]);
    const error = await Promise.resolve(record.h_gone!.execute({}, callContext())).catch((e: unknown) => e);
    expect(McpToolError.isInstance(error) && error.message).toMatch(/no longer offers "gone"/);

    server.servers[0]!.registerTool("fresh", { description: "New", inputSchema: {} }, () => ({ content: [{ type: "text", text: "new" }] }));
    expect(await seen.next()).toMatchObject({ added: ["h_fresh"] });
    expect(set.added).toEqual(["h_fresh"]);
    expect(Object.keys(record)).toEqual(["h_greet", "h_gone"]);
    expect(Object.keys(set.latest())).toEqual(["h_greet", "h_fresh"]);
    expect(await set.latest().h_fresh!.execute({}, callContext())).toBe("new");
  });

  it("in a run: the model's next inference sees a description the server changed mid-run", async () => {
    let tool: RegisteredTool | undefined;
    server = await startHttpMcpServer((s) => {
      tool = s.registerTool("lookup", { description: "Looks up v1", inputSchema: { q: z.string() } }, ({ q }) => {
        tool!.update({ description: "Looks up v2" });
        return { content: [{ type: "text", text: `found ${q}` }] };
      });
    });
    const seen = changes();
    set = await mcpTools({ url: server.url }, { onToolsChanged: seen.onToolsChanged });
    const done = defineTool({ name: "done", description: "finish", parameters: z.object({}), execute: () => "ok" });
    const workflow = new Workflow({ name: "lookup", tools: { ...set.tools, done }, requiredSteps: ["lookup"], terminalTool: "done" });
    const client = new ScriptedClient({
      responses: [
        toolCallsResponse([{ tool: "lookup", args: { q: "x" }, id: "c1" }]),
        async () => {
          await seen.next(); // the refresh after the server's notification
          return toolCallsResponse([{ tool: "lookup", args: { q: "y" }, id: "c2" }]);
        },
        toolCallsResponse([{ tool: "done", args: {}, id: "c3" }]),
      ],
    });
    const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
    expect(await runner.run(workflow, "look it up")).toBe("ok");
    const description = (i: number) => client.requests[i]!.tools!.find((t) => t.name === "lookup")!.description;
    expect(description(0)).toBe("Looks up v1");
    expect(description(2)).toBe("Looks up v2");
  });

  it("an unreachable URL is McpServerError naming it", async () => {
    const error = await mcpTools({ url: "http://127.0.0.1:9/mcp" }, { name: "nowhere" }).catch((e: unknown) => e);
    expect(McpServerError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^MCP server "nowhere" could not be reached at http:\/\/127\.0\.0\.1:9\/mcp: /);
  });
});
