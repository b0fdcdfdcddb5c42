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

/** One line for the terminal: `Name: message`, with a ForgeError's stable code. */
export function errorLine(error: unknown): string {
  if (ForgeError.isInstance(error)) return `${error.name} (${error.code}): ${error.message}`;
  // parseArgs throws a TypeError; its name says nothing to someone who mistyped a flag.
  if (isUsageError(error)) return `${(error as Error).message} (see --help)`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Run a command's main and exit with its code; a thrown usage error exits 2, anything else 1.
 *
 * @example runCli(demoMain, process.argv.slice(2));
 */
export function runCli(main: (args: readonly string[]) => Promise<number | void> | number | void, args: readonly string[]): void {
  Promise.resolve()
    .then(() => main(args))
    .then(
      (code) => process.exit(code ?? 0),
      (error: unknown) => {
        console.error(errorLine(error));
        process.exit(isUsageError(error) ? 2 : 1);
      },
    );
}

// Integer flags are checked in one place; re-exported for the commands that import it from here.
export { positiveInt } from "./int-flag.js";
