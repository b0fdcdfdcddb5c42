/**
 * `forge-ts/postgres`: the run store in a PostgreSQL database. A separate entry because it needs
 * the optional package pg, which the main entry must not pull in.
 */
export { PostgresRunStore, type PostgresRunStoreOptions } from "./persistence/postgres-run-store.js";
