/**
 * `--store <dir|url>`: a directory is a FileRunStore; a libSQL URL (`file:runs.db`,
 * `libsql://host`, `http(s)://`, `ws(s)://`) is a SqlRunStore, which needs the optional
 * @libsql/client package; a `postgres://` or `postgresql://` URL is a PostgresRunStore, which
 * needs the optional pg package (a clear error says which one is missing).
 */
import { InvalidArgumentError } from "../core/errors.js";
import { FileRunStore } from "../persistence/file-run-store.js";
import type { RunStore } from "../persistence/run-store.js";

const SQL_URL = /^(file:|libsql:|https?:|wss?:)/;
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** `leaseMs`: how long a run's lease lasts unless renewed (the store's default, 30 s, otherwise). */
export async function openStore(spec: string, options: { leaseMs?: number } = {}): Promise<{ store: RunStore; label: string }> {
  if (POSTGRES_URL.test(spec)) {
    let postgres: typeof import("../postgres.js");
    try {
      postgres = await import("../postgres.js");
    } catch (error) {
      throw new InvalidArgumentError("--store", `a postgres:// URL needs the optional package pg (npm install pg): ${(error as Error).message}`);
    }
    const store = new postgres.PostgresRunStore({ url: spec, ...options });
    return { store, label: store.label }; // the label hides a password in the URL
  }
  if (!SQL_URL.test(spec)) return { store: new FileRunStore({ dir: spec, ...options }), label: spec };
  let sql: typeof import("../sql.js");
  try {
    sql = await import("../sql.js");
  } catch (error) {
    throw new InvalidArgumentError("--store", `${spec} is a libSQL URL, which needs the optional package @libsql/client (npm install @libsql/client): ${(error as Error).message}`);
  }
  return { store: new sql.SqlRunStore({ url: spec, ...options }), label: spec };
}
