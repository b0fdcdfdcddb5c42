/**
 * What a store value (`--store`, FORGE_STORE, a store's `url` option) names, read in one place:
 *
 *   a plain path (`runs`, `./x`, `/abs`, `C:\x`)                 a directory: FileRunStore
 *   `file:`, `libsql:`, `http(s):`, `ws(s):`, `:memory:`          libSQL: SqlRunStore
 *   `postgres://`, `postgresql://`                                PostgreSQL: PostgresRunStore
 *
 * Anything else that starts like a URL scheme (`mysql://x`, `sqlite:/p`, `redis://h`) is refused:
 * read as a directory it would create `./mysql:/x/…` and list nothing of the database meant.
 * A scheme is RFC 3986's (a letter, then letters, digits, "+", "-", "."), at least two long, so
 * a Windows drive letter stays a path; a relative directory whose name has a colon is written
 * `./name:x`.
 */
import { redactUrl } from "../core/redact.js";
import { InvalidArgumentError } from "../core/errors.js";

export type StoreKind = "directory" | "libsql" | "postgres";

/** The schemes libSQL's client opens (`libsql:` is `wss:`, or `ws:` with `?tls=0`). */
const LIBSQL_SCHEMES = new Set(["file", "libsql", "http", "https", "ws", "wss"]);
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;
const POSTGRES = /^postgres(ql)?:\/\//i;

/** The accepted forms, for the refusal. */
export const STORE_FORMS = "a directory (runs, ./runs, /abs/runs), a libSQL URL (file:runs.db, libsql://host, http(s)://host, ws(s)://host, :memory:) or postgres://user@host/db (postgresql://)";

/**
 * What `spec` names; undefined for a scheme no store opens (or a postgres URL without `//`).
 *
 * @example storeKindOf("file:runs.db"); // "libsql"
 */
export function storeKindOf(spec: string): StoreKind | undefined {
  if (spec === ":memory:") return "libsql";
  const scheme = SCHEME.exec(spec)?.[1]?.toLowerCase();
  if (scheme === undefined) return "directory";
  if (LIBSQL_SCHEMES.has(scheme)) return "libsql";
  return POSTGRES.test(spec) ? "postgres" : undefined;
}

/**
 * `spec`'s kind, or an InvalidArgumentError naming `argument` and the accepted forms (the CLI
 * exits 2 on it, before anything is opened or created).
 *
 * @example parseStoreSpec("mysql://x"); // throws: Invalid --store: "mysql://x" is not a run store; use …
 */
export function parseStoreSpec(spec: string, argument = "--store"): StoreKind {
  if (spec.length === 0) throw new InvalidArgumentError(argument, `is empty; use ${STORE_FORMS}`);
  const kind = storeKindOf(spec);
  if (kind === undefined) throw new InvalidArgumentError(argument, `${JSON.stringify(redactedSpec(spec))} is not a run store; use ${STORE_FORMS}`);
  return kind;
}

/** The value for errors and logs: a password in a URL is shown as "***". */
export const redactedSpec: (spec: string) => string = redactUrl;
