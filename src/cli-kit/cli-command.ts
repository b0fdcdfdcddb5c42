/**
 * How the follow-up commands the CLI prints begin, so each runs as printed in the shell that
 * started this one. `forge-ts` alone is only right when it is on that shell's PATH: a project's
 * local install is reached through `npx forge-ts`, and a source checkout has no built `forge-ts`
 * at all (its own package is not linked into node_modules/.bin), so there it is tsx on the source.
 */
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface CliCommandContext {
  /** Running from the TypeScript sources (tsx, a checkout) rather than the built package. */
  source: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether an executable of this name is in one of the PATH directories. */
  onPath: (name: string, pathVariable: string) => boolean;
}

/** This file is `.ts` only when the sources run (the package ships `.js`). */
const RUNNING_SOURCE = import.meta.url.endsWith(".ts");
const MAIN_TS = fileURLToPath(new URL("../cli/main.ts", import.meta.url));

/** A word the shell passes through unchanged, else single-quoted. */
export const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

function executableOnPath(name: string, pathVariable: string): boolean {
  return pathVariable.split(path.delimiter).some((dir) => {
    if (dir === "") return false;
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false; // not in this directory
    }
  });
}

/**
 * The words a printed command starts with: `npx tsx src/cli/main.ts` from a checkout's sources
 * (the path relative to the working directory when inside it); `npx forge-ts` when npm started
 * this process (npx or an npm script put node_modules/.bin on PATH for this command only) or
 * when no `forge-ts` is on PATH; else `forge-ts`.
 *
 * @example
 * console.log(`continue with: ${cliCommand()} runs resume ${runId}`);
 */
export function cliCommand(context: Partial<CliCommandContext> = {}): string {
  const { source = RUNNING_SOURCE, env = process.env, cwd = process.cwd(), onPath = executableOnPath } = context;
  if (source) {
    const rel = path.relative(cwd, MAIN_TS);
    return `npx tsx ${shellWord(rel.startsWith("..") || path.isAbsolute(rel) ? MAIN_TS : rel)}`;
  }
  if (env.npm_command !== undefined || env.npm_lifecycle_event !== undefined) return "npx forge-ts";
  return onPath("forge-ts", env.PATH ?? "") ? "forge-ts" : "npx forge-ts";
}
