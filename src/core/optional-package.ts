/**
 * The packages only some features need (pg, @libsql/client, bullmq and ioredis, the MCP SDK, the
 * Anthropic SDK, Stately's inspector) are optional peer dependencies: the core install has none
 * of them. A static `import pg from "pg"` would fail with Node's ERR_MODULE_NOT_FOUND before any
 * of our code runs, so each feature loads its packages here, with `import()` — at the top of the
 * module that needs them (top-level await: importing `forge-ts/postgres` without pg fails at
 * import) or on first use — and a missing one is a MissingPackageError naming what to install.
 */
import { MissingPackageError } from "./errors.js";

/**
 * `load` imports the packages (literal specifiers, so the types come with them). A package that
 * is there but fails to load, or one of its own dependencies missing, is rethrown as it is.
 *
 * @example
 * const { default: pg } = await optionalPackages("forge-ts/postgres", ["pg"], () => import("pg"));
 * // without pg: MissingPackageError: forge-ts/postgres needs the package "pg": npm install pg
 */
export async function optionalPackages<T>(feature: string, packages: readonly string[], load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (missingPackage(error, packages)) throw new MissingPackageError(feature, packages);
    throw error;
  }
}

/**
 * "Cannot find package 'pg' imported from …" for one of `packages`: Node names the package of a
 * missing subpath, Vite's resolver (the tests) the whole specifier.
 */
function missingPackage(error: unknown, packages: readonly string[]): boolean {
  if ((error as { code?: unknown } | null)?.code !== "ERR_MODULE_NOT_FOUND") return false;
  const message = String((error as Error).message);
  return packages.some((p) => message.includes(`'${p}'`) || message.includes(`'${p}/`));
}
