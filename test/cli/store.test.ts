import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { runsMain } from "../../src/cli/runs.js";
import { openStore } from "../../src/cli/store.js";
import { cliArgs } from "../support/cli.js";
import { REPO_ROOT } from "../support/cli-build.js";
import { inProcess } from "../support/in-process-cli.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { PostgresRunStore } from "../../src/persistence/postgres-run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-store-"));
  dirs.push(dir);
  return dir;
};

describe("--store <dir|url>", () => {
  it("opens a directory as a FileRunStore and a libSQL URL as a SqlRunStore", async () => {
    const dir = tempDir();
    const files = await openStore(path.join(dir, "runs"));
    expect(files.store).toBeInstanceOf(FileRunStore);
    const url = `file:${path.join(dir, "runs.db")}`;
    const sql = await openStore(url);
    expect(sql).toMatchObject({ label: url });
    expect(sql.store).toBeInstanceOf(SqlRunStore);
    expect(await sql.store.listRuns()).toEqual([]);
  });

  it("opens a postgres:// or postgresql:// URL as a PostgresRunStore, labelled without its password, connecting only on first use", async () => {
    for (const url of ["postgres://forge:secret@db.example:5432/runs", "postgresql://forge:secret@db.example/runs"]) {
      const opened = await openStore(url);
      expect(opened.store).toBeInstanceOf(PostgresRunStore);
      expect(opened.label).toBe(url.replace("secret", "***"));
      await (opened.store as PostgresRunStore).close();
    }
  });

  it("refuses a scheme no store opens: exit 2, one line naming --store and the forms, nothing created", async () => {
    const cwd = tempDir();
    const [main, ...rest] = cliArgs("src/cli/main.ts", "demo", "--quiet", "--store", "mysql://x");
    const refused = await exec(process.execPath, [path.resolve(REPO_ROOT, main!), ...rest], { cwd, env: { ...env, NO_COLOR: "1" } }).then(
      () => {
        throw new Error("forge-ts demo --store mysql://x succeeded");
      },
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^forge-ts: Invalid --store: "mysql:\/\/x" is not a run store; use a directory .*postgres:\/\/.* \[FORGE_INVALID_ARGUMENT\]$/)]);
    expect(readdirSync(cwd)).toEqual([]);
    // The other commands read --store the same way (in-process: the spawn above covers the process path).
    for (const args of [["list", "--store", "sqlite:/p/runs.db"], ["show", "r1", "--store", "redis://127.0.0.1:6379"]]) {
      expect(await inProcess((a) => runsMain(a), args)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^forge-ts: Invalid --store: .* is not a run store/) });
    }
  }, 300_000);
});
