/**
 * `forge-ts mcp --http`: a real server process on port 0 (loopback, with an API key), reached by
 * the SDK's Client over Streamable HTTP.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { cliArgs } from "../support/cli.js";
import { readableRuns } from "../support/readable-runs.js";

const fixtures = "test/mcp-server/fixtures";
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const KEY = "test-key-1";

let dir: string;
let server: ChildProcessByStdio<null, Readable, Readable>;
let url: URL;
let stdout = "";
const clients: Client[] = [];

async function connect(headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Client> {
  const client = new Client({ name: "forge-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "forge-mcp-http-"));
  server = spawn(
    process.execPath,
    cliArgs("src/cli/main.ts", "mcp", "--http", "--port", "0", "--api-key", KEY, "--backend", "sim", "--store", dir, "--workflow", `${fixtures}/quote-workflow.ts`, "--workflow", `${fixtures}/slow-workflow.ts`),
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  url = await new Promise<URL>((resolve, reject) => {
    server.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const listening = /listening on (\S+)[^]*\n {2}tools: .*\n/.exec(stdout);
      if (listening) resolve(new URL(listening[1]!));
    });
    server.once("exit", (code) => reject(new Error(`forge-ts mcp exited ${code} before listening`)));
  });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  if (server.exitCode === null) server.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

describe("forge-ts mcp --http (Streamable HTTP, simulated model)", () => {
  it("says where it listens and what it serves", () => {
    expect(url.pathname).toBe("/mcp");
    expect(url.hostname).toBe("127.0.0.1");
    expect(stdout).toContain("(API key: the one given with --api-key)");
    expect(stdout).toContain("tools: supplier_quote, slow, on the simulated model (profile clean)");
  });

  it("refuses a client without the API key", async () => {
    await expect(connect({})).rejects.toThrow(/401|Missing API key/);
    await expect(connect({ authorization: "Bearer nope" })).rejects.toThrow(/401|Invalid API key/);
  });

  it("lists and calls the workflow tools", async () => {
    const client = await connect();
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["supplier_quote", "slow"]);
    const progress: string[] = [];
    const result = (await client.callTool(
      { name: "supplier_quote", arguments: { task: "Prepare a quote for 250 units of part PN-4471 from Acme Fasteners.", promptVars: { company: "Northwind" } } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? "") },
    )) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ part_number: "PN-4471", total: 85 });
    expect(progress.at(-1)).toBe("done (model calls: 4)");
    expect(await new FileRunStore({ dir }).latest(result._meta?.["forge-ts/runId"] as string)).toMatchObject({ state: "done" });
  });

  it("a client's cancel (a POST of its own in the session) cancels the run", async () => {
    const client = await connect();
    const controller = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { task: "Wait for it." } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => p.message?.startsWith("executingTools") && controller.abort("stop"),
    });
    await expect(call).rejects.toThrow("stop");
    const store = new FileRunStore({ dir });
    await expect.poll(async () => readableRuns(await store.listRuns()).filter((r) => r.workflow === "slow").map((r) => r.state), { timeout: 30_000 }).toEqual(["cancelled"]);
  });

  it("shuts down on SIGTERM (exit 0)", async () => {
    const exited = new Promise<number | null>((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stdout).toContain("forge-ts mcp: SIGTERM, shutting down");
  });
});
