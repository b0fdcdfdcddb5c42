/**
 * `forge-ts mcp` over stdio, the way an IDE assistant uses it: the SDK's Client starts the
 * command (simulated model) and lists and calls its workflow tools. One server for the suite.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { builtModule, cliArgs } from "../support/cli.js";
import { readableRuns } from "../support/readable-runs.js";

const fixtures = "test/mcp-server/fixtures";
const quote = { task: "Prepare a quote for 250 units of part PN-4471 from Acme Fasteners.", promptVars: { company: "Northwind Industrial Supply" } };
const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => !e[0].startsWith("FORGE_") && e[1] !== undefined));

let dir: string;
let client: Client;
let transport: StdioClientTransport;
let stderr = "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "forge-mcp-stdio-"));
  transport = new StdioClientTransport({
    command: process.execPath,
    args: cliArgs("src/cli/main.ts", "mcp", "--backend", "sim", "--store", dir, ...["quote", "approval", "slow"].flatMap((m) => ["--workflow", `${fixtures}/${m}-workflow.ts`]), "--workflow", "test/fixtures/queue-workflow.ts"),
    env,
    stderr: "pipe",
  });
  transport.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  client = new Client({ name: "forge-test", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await rm(dir, { recursive: true, force: true });
});

const runIdOf = (result: CallToolResult) => result._meta?.["forge-ts/runId"] as string;
const texts = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("forge-ts mcp over stdio (simulated model)", () => {
  it("lists one tool per workflow, named after it, taking a task", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["supplier_quote", "approved_quote", "slow", "notes"]);
    const tool = tools[0]!;
    expect(tool.description).toMatch(/^Prepare a supplier quote .* promptVars must give "company"/);
    expect(tool.inputSchema.required).toEqual(["task"]);
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(["task", "sessionId", "promptVars"]);
    expect(tools[2]!.description).toContain('Runs the forge-ts workflow "slow" on a local model: it works with the tools wait and finish');
    expect(stderr).toContain(`forge-ts mcp: serving supplier_quote, approved_quote, slow, notes, on the simulated model (profile clean), store ${dir}, over stdio`);
  });

  it("runs the workflow on a call: its result, structured, with progress and the run id of a stored run", async () => {
    const progress: string[] = [];
    const result = (await client.callTool({ name: "supplier_quote", arguments: quote }, undefined, { onprogress: (p) => progress.push(p.message ?? "") })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 250, unit_price: 0.34, total: 85 });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
    const runId = runIdOf(result);
    expect(result._meta?.["forge-ts/status"]).toBe("done");
    expect(texts(result)).toContain(`forge-ts runs show ${runId}`);
    expect(progress[0]).toBe("inferring (model calls: 0)");
    expect(progress).toContain("executingTools.running (model calls: 1)");
    expect(progress.at(-1)).toBe("done (model calls: 4)");
    const checkpoint = await new FileRunStore({ dir }).latest(runId);
    expect(checkpoint).toMatchObject({ workflow: "supplier_quote", state: "done" });
  });

  it("continues a session: each call is one turn of the same conversation", async () => {
    const first = (await client.callTool({ name: "notes", arguments: { task: "Remember the milk.", sessionId: "desk-1" } })) as CallToolResult;
    const second = (await client.callTool({ name: "notes", arguments: { task: "And the eggs.", sessionId: "desk-1" } })) as CallToolResult;
    expect([texts(first).split("\n")[0], texts(second).split("\n")[0]]).toEqual(["I remember 1 fact(s).", "I remember 2 fact(s)."]);
    const runs = await new FileRunStore({ dir }).listRuns({ sessionId: "desk-1" });
    expect(runs.map((r) => r.runId)).toEqual([runIdOf(first), runIdOf(second)]);
  });

  it("a run that fails is an error result with the typed error's name, code and message", async () => {
    // The simulated model answers in words when it cannot read the request: the retries run out.
    const result = (await client.callTool({ name: "supplier_quote", arguments: { ...quote, task: "Quote me something nice." } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(texts(result)).toMatch(/^ToolCallError \(FORGE_TOOL_CALL\): Model failed to produce a valid tool call/);
    expect(result.structuredContent).toMatchObject({ status: "failed", error: { name: "ToolCallError", code: "FORGE_TOOL_CALL" } });
    expect(await new FileRunStore({ dir }).latest(runIdOf(result))).toMatchObject({ state: "failed" });
    const unstarted = (await client.callTool({ name: "supplier_quote", arguments: { task: quote.task } })) as CallToolResult;
    expect(unstarted.isError).toBe(true);
    expect(texts(unstarted)).toContain("WorkflowDefinitionError (FORGE_WORKFLOW_DEFINITION)");
    expect(texts(unstarted)).toContain("placeholders without a value: company");
  });

  it("a run that needs a person's approval returns waiting (not an error), with its pending request and how to decide it", async () => {
    const result = (await client.callTool({ name: "approved_quote", arguments: quote })) as CallToolResult;
    const runId = runIdOf(result);
    expect(result.isError).toBeUndefined();
    expect(result._meta?.["forge-ts/status"]).toBe("waiting");
    expect(result.structuredContent).toMatchObject({ status: "waiting", runId, requests: [{ tool: "submit_quote", kind: "approval", args: { quantity: 250 } }] });
    const text = texts(result);
    expect(text).toContain(`run ${runId} is waiting for a person (1 pending)`);
    expect(text).toContain(`forge-ts runs approve ${runId}`);
    expect(text).toContain(`--store ${dir}`);
    expect(text).toContain(`--workflow ${builtModule(path.resolve(fixtures, "approval-workflow.ts"))}`);
    expect(await new FileRunStore({ dir }).latest(runId)).toMatchObject({ status: "waiting" });
  });

  it("a client's cancel cancels the run", async () => {
    const controller = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { task: "Wait for it." } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => p.message?.startsWith("executingTools") && controller.abort("the user changed their mind"),
    });
    await expect(call).rejects.toThrow("the user changed their mind");
    const store = new FileRunStore({ dir });
    await expect.poll(async () => readableRuns(await store.listRuns()).filter((r) => r.workflow === "slow").map((r) => r.state), { timeout: 30_000 }).toEqual(["cancelled"]);
    // The server goes on serving.
    expect((await client.listTools()).tools).toHaveLength(4);
  });

  it("refuses a call without a task", async () => {
    const result = (await client.callTool({ name: "supplier_quote", arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(texts(result)).toContain("task");
  });

  it("stops when the client goes away, cancelling the run in flight (its last state recorded)", async () => {
    const pid = transport.pid!;
    let inFlight!: () => void;
    const started = new Promise<void>((resolve) => (inFlight = resolve));
    const call = client.callTool({ name: "slow", arguments: { task: "Wait again." } }, undefined, { onprogress: (p) => p.message?.startsWith("executingTools") && inFlight() });
    call.catch(() => undefined);
    await started;
    await client.close();
    const alive = () => {
      try {
        return process.kill(pid, 0);
      } catch {
        return false;
      }
    };
    await expect.poll(alive, { timeout: 30_000 }).toBe(false);
    expect(stderr).toContain("forge-ts mcp: the client closed stdin, shutting down");
    const slow = readableRuns(await new FileRunStore({ dir }).listRuns()).filter((r) => r.workflow === "slow");
    expect(slow.map((r) => r.state)).toEqual(["cancelled", "cancelled"]);
  });
});
