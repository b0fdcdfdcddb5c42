/**
 * `forge-ts worker` flags: what it refuses (exit 2; the rows in-process, one as a process) and its help; the work itself is in
 * test/queue/distributed.test.ts, with real worker processes.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { workerMain } from "../../src/cli/worker.js";
import { cliArgs } from "../support/cli.js";
import { inProcess } from "../support/in-process-cli.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (...args: string[]) => cliArgs("src/cli/main.ts", "worker", ...args);

describe("forge-ts worker (CLI)", () => {
  it("exits 2 on a bad flag with one line on stderr (the process)", async () => {
    const failed = await run(process.execPath, cli(), { env }).then(
      () => expect.fail("should have exited 2"),
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split("\n")).toHaveLength(1);
    expect(failed.stderr).toContain("--redis");
  });

  it.each([
    [["--redis", "http://x"], "redis://"],
    [["--redis", "redis://127.0.0.1:1"], "give --workflow"],
    [["--redis", "redis://127.0.0.1:1", "--eval", "nope"], "nope"],
    [["--redis", "redis://127.0.0.1:1", "--eval", "sim", "--concurrency", "0"], "--concurrency"],
    [["--redis", "redis://127.0.0.1:1", "--eval", "sim", "--drain-ms", "soon"], "--drain-ms"],
    [["--redis", "redis://127.0.0.1:1", "--workflow", "test/fixtures/queue-workflow.ts"], "--backend"],
    [["--redis", "redis://127.0.0.1:1", "--workflow", "test/fixtures/queue-workflow.ts", "--backend", "sim", "--workflow", "test/fixtures/queue-workflow.ts"], "one workflow module"],
    [["--redis", "redis://127.0.0.1:1", "--frobnicate"], "frobnicate"],
    [["--redis", "redis://127.0.0.1:1", "--eval", "sim", "--metrics-port", "99999"], "--metrics-port"],
    [["--redis", "redis://127.0.0.1:1", "--eval", "sim", "--metrics-port", "nine"], "--metrics-port"],
    [["--redis", "redis://127.0.0.1:1", "--eval", "sim", "--metrics-token", "t"], "need --metrics-port"],
  ])("exits 2 on bad flags %j", async (args, message) => {
    const { code, stderr } = await inProcess((a) => workerMain(a), args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it("exits 1 at once when Redis does not answer", async () => {
    const failed = await run(process.execPath, cli("--redis", "redis://127.0.0.1:1", "--eval", "sim"), { env }).then(
      () => expect.fail("should have exited 1"),
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("Redis at redis://127.0.0.1:1 does not answer");
  });

  it("prints its help", async () => {
    const { stdout } = await run(process.execPath, cli("--help"), { env });
    for (const flag of ["--redis", "--store", "--workflow", "--eval", "--concurrency", "--lock-ms", "--drain-ms", "--backend", "--metrics-port", "--metrics-host", "--metrics-token"]) expect(stdout).toContain(flag);
  });
});
