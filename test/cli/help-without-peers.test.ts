/**
 * Every command's --help prints its usage whatever is installed: a missing optional peer is for
 * running, not for reading (issue 46 found `forge-ts worker --help` exiting 1 naming bullmq). The
 * peers are made unresolvable with a module hook, as in a core install (the packed core install,
 * test/package/core-install.test.ts, checks the same for real).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { cliArgs } from "../support/cli.js";

const exec = promisify(execFile);
const NO_PEERS = "./test/fixtures/cli/no-optional-peers.mjs";
const COMMANDS = ["demo", "proxy", "run", "runs", "mcp", "worker", "visualize", "eval", "eval-batch", "report"];

const cli = (...args: string[]) => exec(process.execPath, ["--import", NO_PEERS, ...cliArgs("src/cli/main.ts", ...args)], { env: { ...process.env, NO_COLOR: "1" } });

describe("--help without the optional peers", () => {
  it.concurrent.each(COMMANDS)("forge-ts %s --help prints its usage and exits 0", async (command) => {
    const { stdout, stderr } = await cli(command, "--help");
    expect(stdout).toMatch(new RegExp(`^usage: forge-ts ${command}\\b`, "im"));
    expect(stderr).toBe("");
  });

  it("running the worker still names what to install", async () => {
    const failed = await cli("worker", "--redis", "redis://127.0.0.1:1").then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed).toMatchObject({ code: 1, stderr: 'forge-ts: forge-ts/queue needs the packages "bullmq" and "ioredis": npm install bullmq ioredis [FORGE_MISSING_PACKAGE]\n' });
  });
});
