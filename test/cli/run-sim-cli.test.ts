/**
 * `forge-ts run <module> "go" --backend sim` on a module that exports only `workflow` (written
 * to a temp dir as a newcomer would): the simulated model plays the schema-driven oracle, says
 * so in one line on stderr, and the run completes (its result printed) with prerequisites respected.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (args: string[]) => exec(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { env: { ...env, NO_COLOR: "1" } });

/** A plain .mjs module, importing forge-ts and zod by absolute URL since it lives outside the project. */
function writeModule(dir: string): string {
  const forge = pathToFileURL(path.resolve("src/index.ts")).href;
  const zod = import.meta.resolve("zod");
  const file = path.join(dir, "wf.mjs");
  writeFileSync(
    file,
    `import { appendFileSync } from "node:fs";
import { z } from ${JSON.stringify(zod)};
import { defineTool, Workflow } from ${JSON.stringify(forge)};

const log = (tool, args) => appendFileSync(new URL("./calls.log", import.meta.url), JSON.stringify({ tool, args }) + "\\n");
const tool = (name, parameters, prerequisites = []) =>
  defineTool({ name, description: name, parameters, prerequisites, execute: (args) => (log(name, args), { done: name, ...args }) });

export const workflow = new Workflow({
  name: "orders",
  tools: {
    find_customer: tool("find_customer", z.object({ email: z.email() })),
    list_orders: tool("list_orders", z.object({ customer_id: z.string().regex(/^C-\\d{4}$/), limit: z.int().min(1).max(50) }), ["find_customer"]),
    finish: tool("finish", z.object({ summary: z.string().min(3), status: z.enum(["ok", "failed"]) }), ["list_orders"]),
  },
  requiredSteps: ["list_orders"],
  terminalTool: "finish",
});
`,
  );
  return file;
}

describe("forge-ts run --backend sim on a module without an oracle", () => {
  it("completes the run, one line on stderr saying a schema-driven oracle plays it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "forge-sim-any-"));
    const module = writeModule(dir);
    const ran = await cli(["run", module, "go", "--backend", "sim", "--store", path.join(dir, "store"), "--run-id", "r1"]);
    expect(ran.stdout).toMatch(/^run r1\n/);
    expect(JSON.parse(ran.stdout.slice(ran.stdout.indexOf("{")))).toEqual({ done: "finish", summary: "summary", status: "ok" });
    expect(ran.stderr.trim().split("\n")).toEqual([
      `forge-ts: ${module} exports no oracle; the simulated model plays a schema-driven one (required steps in order, arguments from each tool's schema, then the terminal tool)`,
    ]);
    const calls = readFileSync(path.join(dir, "calls.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as unknown);
    expect(calls).toEqual([
      { tool: "find_customer", args: { email: "user@example.com" } },
      { tool: "list_orders", args: { customer_id: "C-0000", limit: 1 } },
      { tool: "finish", args: { summary: "summary", status: "ok" } },
    ]);
  }, 300_000);

  it("exits 2 with one line naming the tool and the keyword when a schema is beyond it", async () => {
    const failed = await cli(["run", "test/fixtures/schema-gap-workflow.ts", "go", "--backend", "sim", "--store", mkdtempSync(path.join(tmpdir(), "forge-sim-gap-"))]).then(
      () => expect.fail("should have exited 2"),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split("\n")).toHaveLength(1);
    expect(failed.stderr).toContain('Tool "pick": the schema-driven oracle cannot generate arguments (not at choice)');
    expect(failed.stderr).toContain('export an Oracle named "oracle"');
  }, 300_000);
});
