/**
 * mcpTools against the official @modelcontextprotocol/server-everything over stdio: the tools
 * as forge tools (names, descriptions, schemas checked by ajv), every kind of result, errors on
 * the tool-error channel, cancellation and deadlines, crashes with one restart per run, close.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ContextManager } from "../../src/context/context-manager.js";
import { InvalidArgumentError, McpServerError, McpToolError, reviveError, toolCallsResponse, defineTool, Workflow } from "../../src/index.js";
import { WorkflowRunner } from "../../src/runner.js";
import { ScriptedClient } from "../../src/testing.js";
import { mcpTools, type McpCallRecord, type McpToolSet } from "../../src/mcp.js";
import { z } from "zod";
import { callContext, everything, filesystem } from "./support/mcp-servers.js";

let ev: McpToolSet;
const records: McpCallRecord[] = [];
beforeAll(async () => {
  ev = await mcpTools(everything(), { name: "everything", prefix: "ev_", deny: ["toggle-simulated-logging"], onResult: (r) => void records.push(r) });
});
afterAll(() => ev?.close());

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Wait until `check` holds: generous, since the deadline only matters when something is broken. */
const until = (check: () => boolean) => vi.waitUntil(check, { timeout: 30_000, interval: 10 });
/**
 * server-everything's long operation, in seconds: longer than the test's own timeout, so a call
 * that ends in time was ended by the cancellation or deadline under test, however slow the machine.
 */
const FOREVER_S = 600;

describe("mcpTools over stdio (server-everything)", () => {
  it("takes the server's tools: prefixed names, descriptions, input schemas; deny leaves one out", () => {
    const names = Object.keys(ev.tools);
    expect(names).toContain("ev_echo");
    expect(names).toContain("ev_trigger-long-running-operation");
    expect(names).not.toContain("ev_toggle-simulated-logging");
    expect(ev.skipped).toEqual([]);
    expect(ev.serverInfo?.name).toBe("mcp-servers/everything");
    const echo = ev.tools.ev_echo!;
    expect(echo.name).toBe("ev_echo");
    expect(echo.description).toBe("Echoes back the input string");
    expect(echo.spec.parameters).toEqual({
      type: "object",
      properties: { message: { type: "string", description: "Message to echo" } },
      required: ["message"],
    });
  });

  it("checks arguments with the tool's JSON Schema before the server sees them", () => {
    const sum = ev.tools["ev_get-sum"]!;
    expect(sum.validateArgs({ a: 1, b: 2 })).toEqual({ ok: true, value: { a: 1, b: 2 } });
    const bad = sum.validateArgs({ a: "x" });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.issues.map((i) => i.path).sort()).toEqual(["a", "b"]);
  });

  it("maps results: text → text, structuredContent → JSON, images and resources → references (raw parts to onResult)", async () => {
    expect(await ev.tools.ev_echo!.execute({ message: "hi" }, callContext())).toBe("Echo: hi");
    expect(await ev.tools["ev_get-structured-content"]!.execute({ location: "Chicago" }, callContext())).toEqual({
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
    const image = await ev.tools["ev_get-tiny-image"]!.execute({}, callContext("run-img"));
    expect(image).toMatch(/^Here's the image you requested:\n\[image image\/png, [\d.]+ kB; not shown\]\nThe image above is the MCP logo\.$/);
    const raw = records.find((r) => r.runId === "run-img")!;
    expect(raw).toMatchObject({ server: "everything", tool: "ev_get-tiny-image", remoteTool: "get-tiny-image", idempotencyKey: "run-img:0:0" });
    expect(raw.result.content[1]).toMatchObject({ type: "image", mimeType: "image/png", data: expect.stringMatching(/^iVBOR/) });
    const links = await ev.tools["ev_get-resource-links"]!.execute({ count: 2 }, callContext());
    expect(links).toContain('[resource link demo://resource/dynamic/blob/1 "Blob Resource 1" (text/plain)]');
    const embedded = await ev.tools["ev_get-resource-reference"]!.execute({ resourceType: "Text", resourceId: 1 }, callContext());
    expect(embedded).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain, \d+ chars\)\]\nResource 1: This is a plaintext resource/);
  });

  it("isError: true is thrown as McpToolError carrying the server's message", async () => {
    // Past the client-side check on purpose, to make the server itself refuse.
    const error = await Promise.resolve(ev.tools["ev_get-sum"]!.execute({ a: "x" }, callContext())).catch((e: unknown) => e);
    expect(McpToolError.isInstance(error)).toBe(true);
    expect((error as McpToolError).message).toMatch(/Invalid arguments for tool get-sum/);
    expect((error as McpToolError).data).toEqual({ server: "everything", tool: "get-sum" });
    expect((error as McpToolError).result).toMatchObject({ isError: true });
    expect(reviveError((error as McpToolError).toJSON())).toMatchObject({ code: "FORGE_MCP_TOOL", server: "everything", tool: "get-sum" });
  });

  it("an aborted signal cancels the MCP request; the server stays usable", async () => {
    const controller = new AbortController();
    const call = Promise.resolve(ev.tools["ev_trigger-long-running-operation"]!.execute({ duration: FOREVER_S, steps: 5 }, callContext("run-c", controller.signal)));
    setTimeout(() => controller.abort(new Error("run cancelled")), 150);
    await expect(call).rejects.toThrow("run cancelled");
    expect(await ev.tools.ev_echo!.execute({ message: "still here" }, callContext())).toBe("Echo: still here");
  });

  it("in a run: a slow MCP tool past its deadline and a server error reach the model as tool errors", async () => {
    const slow = await mcpTools(everything(), { allow: ["trigger-long-running-operation", "get-sum"], timeoutMs: 300 });
    try {
      const answer = defineTool({ name: "answer", description: "final answer", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
      const workflow = new Workflow({ name: "slow", tools: { ...slow.tools, answer }, terminalTool: "answer" });
      const client = new ScriptedClient({
        responses: [
          toolCallsResponse([{ tool: "trigger-long-running-operation", args: { duration: FOREVER_S, steps: 5 }, id: "c1" }]),
          toolCallsResponse([{ tool: "answer", args: { text: "gave up waiting" }, id: "c2" }]),
        ],
      });
      const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
      expect(await runner.run(workflow, "run the long operation")).toBe("gave up waiting");
      const toolMessage = JSON.stringify(client.requests[1]!.messages);
      expect(toolMessage).toContain("[ToolError] trigger-long-running-operation: Tool \\\"trigger-long-running-operation\\\" did not finish within its 300 ms deadline");
      expect(runner.lastRunStats?.toolErrors).toBe(1);
      // The server got the cancellation and goes on answering.
      expect(await slow.tools["get-sum"]!.execute({ a: 2, b: 3 }, callContext())).toBe("The sum of 2 and 3 is 5.");
    } finally {
      await slow.close();
    }
  });

  it("a crashed server is started again once per run; McpServerError names it with its stderr tail", async () => {
    const set = await mcpTools(everything(), { name: "crashy", allow: ["echo", "trigger-long-running-operation"] });
    try {
      const echo = set.tools.echo!;
      const first = set.pid!;
      // Killed while a call runs: that call fails, naming the server and its stderr.
      const inflight = Promise.resolve(set.tools["trigger-long-running-operation"]!.execute({ duration: FOREVER_S, steps: 5 }, callContext("r1")));
      setTimeout(() => process.kill(first, "SIGKILL"), 150);
      const lost = await inflight.catch((e: unknown) => e);
      expect(McpServerError.isInstance(lost)).toBe(true);
      expect((lost as McpServerError).message).toMatch(/^MCP server "crashy" lost its connection during "trigger-long-running-operation".*; the next call starts it again/);
      expect((lost as McpServerError).stderrTail).toContain("Starting default (STDIO) server...");

      // The next call of run r1 starts it again...
      expect(await echo.execute({ message: "back" }, callContext("r1"))).toBe("Echo: back");
      const second = set.pid!;
      expect(second).not.toBe(first);
      // ...but not a second time in the same run.
      process.kill(second, "SIGKILL");
      await until(() => set.pid === undefined);
      const refused = await Promise.resolve(echo.execute({ message: "again" }, callContext("r1"))).catch((e: unknown) => e);
      expect(McpServerError.isInstance(refused)).toBe(true);
      expect((refused as McpServerError).message).toMatch(/^MCP server "crashy" exited; it was already started again once in run r1\n--- server stderr \(tail\) ---\n/);
      // Another run has its own restart.
      expect(await echo.execute({ message: "new run" }, callContext("r2"))).toBe("Echo: new run");
    } finally {
      await set.close();
    }
  });

  it("close() ends the process; later calls fail with McpServerError", async () => {
    const set = await mcpTools(everything(), { allow: ["echo"] });
    const pid = set.pid!;
    expect(alive(pid)).toBe(true);
    await set.close();
    await until(() => !alive(pid));
    await expect(Promise.resolve(set.tools.echo!.execute({ message: "x" }, callContext()))).rejects.toThrow(/was closed/);
    await set.close(); // idempotent
  });

  it("a signal ties the server to a run: aborting it closes the server", async () => {
    const controller = new AbortController();
    const set = await mcpTools(everything(), { allow: ["echo"], signal: controller.signal });
    const pid = set.pid!;
    controller.abort();
    await until(() => !alive(pid));
  });

  it("a server that cannot start: McpServerError with its stderr tail; a missing command; options checked up front", async () => {
    const dead = await mcpTools(filesystem("/nonexistent/forge-ts-mcp-test"), { name: "fs" }).catch((e: unknown) => e);
    expect(McpServerError.isInstance(dead)).toBe(true);
    expect((dead as McpServerError).code).toBe("FORGE_MCP_SERVER");
    expect((dead as McpServerError).message).toMatch(/^MCP server "fs" could not be started \(.*\): it exited during the MCP handshake\n--- server stderr \(tail\) ---\n/);
    expect((dead as McpServerError).stderrTail).toContain("None of the specified directories are accessible");
    const revived = reviveError((dead as McpServerError).toJSON()) as McpServerError;
    expect(revived).toBeInstanceOf(McpServerError);
    expect(revived.stderrTail).toBe((dead as McpServerError).stderrTail);

    await expect(mcpTools({ command: "/nonexistent/forge-ts-mcp-server" })).rejects.toThrow(/could not be started .*ENOENT/);
    await expect(mcpTools({ command: "node", url: "http://x" } as never)).rejects.toThrow(InvalidArgumentError);
    await expect(mcpTools(everything(), { prefx: "x" } as never)).rejects.toThrow(/Unrecognized key.*prefx/);
    await expect(mcpTools(everything(), { prefix: "9" })).rejects.toThrow(/prefix: must start with a letter/);
    await expect(mcpTools(everything(), { allow: ["echo", "ecko"] })).rejects.toThrow(/options.allow: "ecko" is not a tool of MCP server/);
  });
});
