/**
 * `forge-ts runs list | show | delete` on a store holding a damaged run (one log line that does
 * not parse) beside healthy ones, and status words that agree with the state.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runsMain } from "../../src/cli/runs.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { Commit } from "../../src/persistence/run-store.js";
import { commitOf, snapshotOf } from "../persistence/support/run-store-contract.js";
import { cliArgs } from "../support/cli.js";
import { inProcess } from "../support/in-process-cli.js";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (args: string[]) =>
  exec(process.execPath, cliArgs("src/cli/main.ts", ...args), { env: { ...env, NO_COLOR: "1" } }).then(
    (ok) => ({ code: 0, ...ok }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
const runs = (args: string[]) => inProcess((a) => runsMain(a), args);
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A store with a done run, a cancelled one (and one as forge-ts 0.1 stored it: status "done"), and "bad", whose line 3 of 5 is damaged. */
async function storeWithDamage(): Promise<{ dir: string; badLog: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-runs-list-"));
  const store = new FileRunStore({ dir });
  const write = async (runId: string, commits: number, parts: Partial<Commit>) => {
    const lease = await store.lock(runId);
    for (let seq = 1; seq <= commits; seq++) await store.commit(commitOf(lease, seq, { ...(seq === 1 ? { snapshot: snapshotOf() } : {}), ...parts }));
    await lease.release();
  };
  await write("good", 2, { createdAt: 1, state: "done", status: "done" });
  await write("stopped", 2, { createdAt: 2, state: "cancelled", status: "cancelled" });
  await write("old-stop", 1, { createdAt: 3, state: "cancelled", status: "done" });
  await write("bad", 5, { createdAt: 4 });
  const badLog = path.join(dir, "runs", "bad", "log.jsonl");
  const lines = readFileSync(badLog, "utf8").split("\n");
  lines[2] = lines[2]!.slice(0, 25);
  writeFileSync(badLog, lines.join("\n"));
  return { dir, badLog };
}

describe("forge-ts runs list / show / delete with a damaged run", () => {
  it("lists every healthy run and marks the damaged one with its file and line; show names them (exit 1); delete removes it", async () => {
    const { dir, badLog } = await storeWithDamage();
    const store = ["--store", dir];

    const listed = await cli(["runs", "list", ...store]);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split("\n");
    expect(lines.slice(1, 5)).toEqual([
      expect.stringMatching(/^good +wf +- +done +done +2 /),
      expect.stringMatching(/^stopped +wf +- +cancelled +cancelled +2 /),
      expect.stringMatching(/^old-stop +wf +- +cancelled +cancelled +1 /),
      expect.stringMatching(/^bad +- +- +- +damaged +- +-$/),
    ]);
    const cut = JSON.stringify(readFileSync(badLog, "utf8").split("\n")[2]);
    expect(lines[5]).toMatch(new RegExp(`^damaged bad: run bad's stored record at ${escaped(badLog)}:3 cannot be read \\(not JSON: .+\\); it begins ${escaped(cut)} \\(forge-ts runs delete bad removes it\\)$`));
    expect(lines).toHaveLength(6);

    const shown = await cli(["runs", "show", "bad", ...store]);
    expect(shown.code).toBe(1);
    expect(shown.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(new RegExp(`^forge-ts: run bad's stored record at ${escaped(badLog)}:3 cannot be read.* \\[FORGE_CORRUPT_RECORD\\]$`))]);

    const json = JSON.parse((await runs(["list", "--json", ...store])).stdout) as unknown[];
    expect(json).toContainEqual({ runId: "bad", damaged: { where: `${badLog}:3`, message: expect.stringContaining("cannot be read") } });
    expect(json).toContainEqual(expect.objectContaining({ runId: "old-stop", state: "cancelled", status: "cancelled" }));
    expect((await runs(["list", "--status", "damaged", ...store])).stdout).toMatch(/^run .*\nbad +- +- +- +damaged/);

    const deleted = await cli(["runs", "delete", "bad", ...store]);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted damaged run bad (${badLog}:3)\n` });
    expect((await runs(["list", ...store])).stdout).not.toContain("bad");
    expect(await runs(["delete", "bad", ...store])).toMatchObject({ code: 2, stderr: expect.stringContaining("no run bad") });
  }, 300_000);

  it("a cancelled run is cancelled in every filter: --status cancelled finds it, --status done does not", async () => {
    const { dir } = await storeWithDamage();
    const ids = async (status: string) => (await runs(["list", "--status", status, "--json", "--store", dir])).stdout;
    expect((JSON.parse(await ids("cancelled")) as { runId: string }[]).map((r) => r.runId)).toEqual(["stopped", "old-stop"]);
    expect((JSON.parse(await ids("done")) as { runId: string }[]).map((r) => r.runId)).toEqual(["good"]);
    expect(await ids("failed")).toBe("[]");
    expect(await runs(["list", "--status", "broken", "--store", dir])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--status.*active, waiting, done, failed, cancelled, damaged/) });
  });
});
