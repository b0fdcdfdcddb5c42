/**
 * `forge-ts/sql`: the run store in a SQLite (libSQL) database. A separate entry because it needs
 * the optional package @libsql/client, which the main entry must not pull in.
 */
export { SqlRunStore, type SqlRunStoreOptions } from "./persistence/sql-run-store.js";
