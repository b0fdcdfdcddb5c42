/**
 * How every forge-ts command ends: its exit code, and one line for an error. 0 success, 1 the
 * work failed (a backend, a run), 2 the command line was wrong (unknown or bad flags and values)
 * — the same in `forge-ts`, `npm start` and the eval commands.
 */
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { ForgeError, InvalidArgumentError } from "../core/errors.js";

/**
 * Whether the module at `moduleUrl` is the script node was started with (not imported by
 * another command). The script path is resolved through symlinks (npm's bin links).
 */
export function isMainModule(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === moduleUrl;
  } catch {
    return pathToFileURL(script).href === moduleUrl;
  }
}

/** A usage error: our own InvalidArgumentError, or node:util parseArgs refusing a flag. */
export function isUsageError(error: unknown): boolean {
  if (error instanceof InvalidArgumentError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}

/**
 * An error in one line, the message first and then what identifies it: a ForgeError's stable
 * code (`<message> [FORGE_CODE]`, to search for), `(see --help)` for a flag parseArgs refused,
 * another error's class name unless it is a plain Error.
 *
 * @example errorText(new InvalidArgumentError("--port", "expected 0..65535")); // "Invalid --port: expected 0..65535 [FORGE_INVALID_ARGUMENT]"
 */
export function errorText(error: unknown): string {
  if (ForgeError.isInstance(error)) return `${error.message} [${error.code}]`;
  // parseArgs throws a TypeError; its name says nothing to someone who mistyped a flag.
  if (isUsageError(error)) return `${(error as Error).message} (see --help)`;
  if (!(error instanceof Error)) return String(error);
  return error.name === "Error" ? error.message : `${error.message} [${error.name}]`;
}

/** The line a command prints for an error: `forge-ts: ` and errorText. */
export const errorLine = (error: unknown): string => `forge-ts: ${errorText(error)}`;

/**
 * A command's main to its exit code: what it returned (nothing is 0), or for a thrown error its
 * one line on stderr and 2 for a usage error, 1 for anything else.
 *
 * @example const code = await exitCodeOf(proxyMain, ["--frobnicate"]); // 2, after one line on stderr
 */
export async function exitCodeOf(main: (args: readonly string[]) => Promise<number | void> | number | void, args: readonly string[]): Promise<number> {
  try {
    return (await main(args)) ?? 0;
  } catch (error) {
    console.error(errorLine(error));
    return isUsageError(error) ? 2 : 1;
  }
}

/**
 * Run a command's main and exit with its code (exitCodeOf).
 *
 * @example runCli(demoMain, process.argv.slice(2));
 */
export function runCli(main: (args: readonly string[]) => Promise<number | void> | number | void, args: readonly string[]): void {
  void exitCodeOf(main, args).then((code) => process.exit(code));
}

// Integer flags are checked in one place; re-exported for the commands that import it from here.
export { positiveInt } from "./int-flag.js";
