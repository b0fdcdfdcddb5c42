/**
 * `--store <dir|url>`: a directory is a FileRunStore; a libSQL URL (`file:runs.db`,
 * `libsql://host`, `http(s)://`, `ws(s)://`) is a SqlRunStore, which needs the optional
 * @libsql/client package (a clear error says so when it is missing).
 */
import { InvalidArgumentError } from "../core/errors.js";
import { FileRunStore } from "../persistence/file-run-store.js";
import type { RunStore } from "../persistence/run-store.js";

const SQL_URL = /^(file:|libsql:|https?:|wss?:)/;

export async function openStore(spec: string): Promise<{ store: RunStore; label: string }> {
  if (!SQL_URL.test(spec)) return { store: new FileRunStore({ dir: spec }), label: spec };
  let sql: typeof import("../sql.js");
  try {
    sql = await import("../sql.js");
  } catch (error) {
    throw new InvalidArgumentError("--store", `${spec} is a libSQL URL, which needs the optional package @libsql/client (npm install @libsql/client): ${(error as Error).message}`);
  }
  return { store: new sql.SqlRunStore({ url: spec }), label: spec };
}
