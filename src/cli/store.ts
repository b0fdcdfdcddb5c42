/**
 * `--store <dir|url>`, read one way by every command (demo, run, runs, worker, visualize, mcp):
 * a directory is a FileRunStore; a libSQL URL (`file:runs.db`, `libsql://host`, `http(s)://`,
 * `ws(s)://`) is a SqlRunStore, which needs the optional @libsql/client package; a
 * `postgres://` or `postgresql://` URL is a PostgresRunStore, which needs the optional pg
 * package (a clear error says which one is missing). Which is which is decided by
 * parseStoreSpec (src/persistence/store-spec.ts); any other scheme is refused before anything
 * is created.
 */
import path from "node:path";
import { FileRunStore } from "../persistence/file-run-store.js";
import type { RunStore } from "../persistence/run-store.js";
import { parseStoreSpec } from "../persistence/store-spec.js";

/**
 * The `--store` value a command uses: the flag, else FORGE_STORE, else `fallback` (`.forge` for
 * the commands that always have a store; none for the demo, which records only when asked).
 */
export function storeSpec(flag: string | undefined, fallback: string): string;
export function storeSpec(flag: string | undefined, fallback?: undefined): string | undefined;
export function storeSpec(flag: string | undefined, fallback?: string): string | undefined {
  if (flag !== undefined && flag !== "") return flag;
  const env = process.env.FORGE_STORE;
  return env !== undefined && env !== "" ? env : fallback;
}

export interface OpenStoreOptions {
  /** How long a run's lease lasts unless renewed (the store's default, 30 s, otherwise). */
  leaseMs?: number;
  /**
   * A directory as an absolute path, so the commands a label is pasted into work from any
   * working directory (the MCP server's hints are run from wherever the person's shell is).
   */
  absolute?: boolean;
}

/** @example const { store, label } = await openStore(storeSpec(values.store, ".forge")); */
export async function openStore(spec: string, options: OpenStoreOptions = {}): Promise<{ store: RunStore; label: string }> {
  const { absolute, ...storeOptions } = options;
  const kind = parseStoreSpec(spec);
  if (kind === "postgres") {
    // pg and @libsql/client are optional peers: without one, its import fails with one line naming it.
    const postgres = await import("../persistence/postgres-run-store.js");
    const store = new postgres.PostgresRunStore({ url: spec, ...storeOptions });
    return { store, label: store.label }; // the label hides a password in the URL
  }
  if (kind === "directory") {
    const dir = absolute ? path.resolve(spec) : spec;
    return { store: new FileRunStore({ dir, ...storeOptions }), label: dir };
  }
  const sql = await import("../persistence/sql-run-store.js");
  return { store: new sql.SqlRunStore({ url: spec, ...storeOptions }), label: spec };
}
