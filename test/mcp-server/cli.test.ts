/**
 * `forge-ts mcp` flags: what it refuses before serving (exit 2, one line) and its help. Three
 * cases start the command; the rest call its main in-process (with --http, so that it never
 * takes over this process's console as stdio mode does).
 */
import { execFile } from "node:child_process";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { mcpMain } from "../../src/cli/mcp.js";
import { isUsageError } from "../../src/cli-kit/run-cli.js";
import { cliArgs } from "../support/cli.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (...args: string[]) => cliArgs("src/cli/main.ts", "mcp", ...args);
const quote = ["--workflow", "test/mcp-server/fixtures/quote-workflow.ts"];

async function exits2(args: string[]): Promise<string> {
  const failed = await run(process.execPath, cli(...args), { env }).then(
    () => expect.fail("should have exited 2"),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  expect(failed.code).toBe(2);
  expect(failed.stderr.trim().split("\n")).toHaveLength(1);
  expect(failed.stdout).toBe("");
  return failed.stderr;
}

describe("forge-ts mcp (CLI)", () => {
  it("exits 2 with one line on a workflow module that cannot be loaded", async () => {
    expect(await exits2(["--workflow", "test/mcp-server/fixtures/nope.ts", "--backend", "sim"])).toMatch(
      /^forge-ts: Invalid workflow-module: cannot import test\/mcp-server\/fixtures\/nope.ts.* \[FORGE_INVALID_ARGUMENT\]\n$/,
    );
  });

  it("exits 2 when a non-loopback --host has no --api-key", async () => {
    expect(await exits2([...quote, "--backend", "sim", "--http", "--host", "0.0.0.0"])).toContain("--api-key");
  });

  it("prints its help", async () => {
    const { stdout } = await run(process.execPath, cli("--help"), { env });
    for (const flag of ["--workflow", "--store", "--http", "--port", "--host", "--api-key", "--backend", "--model", "--backend-api-key", "--max-iterations"]) expect(stdout).toContain(flag);
  });

  it.each([
    [["--backend", "sim"], "--workflow"],
    [[...quote], "--backend"],
    [[...quote, "--backend", "sim", "--model", "genius"], "clean, small-model, chaotic"],
    [["--workflow", "test/fixtures/schema-gap-workflow.ts", "--backend", "sim"], 'Tool "pick": the schema-driven oracle cannot generate arguments (not at choice)'],
    [[...quote, ...quote, "--backend", "sim"], 'would both be the MCP tool "supplier_quote"'],
    [[...quote, "--backend", "sim", "--port", "70000"], "--port"],
    [[...quote, "--backend", "sim", "--budget", "lots"], "--budget"],
    [[...quote, "--frobnicate"], "frobnicate"],
  ])("refuses %j (a usage error: exit 2)", async (args, message) => {
    const error = await mcpMain([...args, "--http"], "0.0.0", { signals: new EventEmitter(), stdin: new PassThrough() }).then(
      () => expect.fail("should have refused"),
      (e: unknown) => e,
    );
    expect(isUsageError(error)).toBe(true);
    expect((error as Error).message).toContain(message);
  });
});
