/**
 * How a test spawns a CLI: `process.execPath` on the JavaScript twin the globalSetup built
 * (support/cli-build.ts), not `--import tsx` on the source, which costs about 2 s of CPU per
 * spawn. Workflow modules a test passes as `.ts` paths run as their built twins too: plain Node
 * cannot import TypeScript that imports `.js` specifiers. Only test/cli/demo-cli.test.ts still
 * spawns through tsx, to keep `npm start`'s path covered.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { inject } from "vitest";
import { isTranspiled, REPO_ROOT } from "./cli-build.js";

/** The entry points tests spawn. */
export type CliEntry = "src/cli/main.ts" | "src/cli/demo.ts" | "eval/cli/run.ts" | "eval/cli/batch.ts" | "eval/cli/report.ts" | "eval/bench/run.ts";

/**
 * The built twin of a `.ts` module in the repo, in the form it was given (repo-relative stays
 * relative to the repo root, the tests' working directory; absolute stays absolute). Any other
 * argument, a missing `.ts` file included, comes back unchanged. Throws when a module exists but
 * its twin does not, rather than spawning on a path that cannot load.
 *
 * @example
 * builtModule("test/fixtures/approval-workflow.ts"); // "test-output/cli-js/node20-<hash>/test/fixtures/approval-workflow.js" on Node 20
 */
export function builtModule(arg: string): string {
  const rel = path.relative(REPO_ROOT, path.resolve(REPO_ROOT, arg)).split(path.sep).join("/");
  // A path to no module at all is what a test of the CLI's refusal passes: left as it is.
  if (!isTranspiled(rel) || !existsSync(path.join(REPO_ROOT, rel))) return arg;
  const twin = `${inject("forgeCliBuild")}/${rel.replace(/\.ts$/, ".js")}`;
  if (!existsSync(path.join(REPO_ROOT, twin))) throw new Error(`no built twin of ${arg} at ${twin}: did the globalSetup (test/global-setup.ts) run?`);
  return path.isAbsolute(arg) ? path.join(REPO_ROOT, twin) : twin;
}

/**
 * The argv after `process.execPath` that runs `entry` as built, with every `.ts` module among
 * `args` (alone or as `--flag=value`) mapped to its built twin.
 *
 * @example
 * spawn(process.execPath, cliArgs("src/cli/main.ts", "run", "test/fixtures/approval-workflow.ts", "go", "--backend", "sim"));
 */
export function cliArgs(entry: CliEntry, ...args: string[]): string[] {
  return [builtModule(entry), ...args.map((arg) => (/^--[^=]+=/.test(arg) ? arg.replace(/=(.*)$/, (_, v: string) => `=${builtModule(v)}`) : builtModule(arg)))];
}
