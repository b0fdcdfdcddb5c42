import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/store.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { PostgresRunStore } from "../../src/persistence/postgres-run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("--store <dir|url>", () => {
  it("opens a directory as a FileRunStore and a libSQL URL as a SqlRunStore", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "forge-store-"));
    dirs.push(dir);
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
});
