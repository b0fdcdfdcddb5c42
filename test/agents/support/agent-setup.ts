/**
 * An agent's setup, read from its docs page (docs/agents/<agent>.md), so the page cannot drift
 * from what the tests run. The page marks its blocks on the fence line:
 *   ```json file=opencode.json              a file in the project directory
 *   ```toml file=~/.codex/config.toml       a file under HOME
 *   ```sh env                               `export NAME=value` lines
 *   ```sh run                               the one-line non-interactive run
 * The pages show the proxy's default address; the tests put the live one in its place.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { blocksOf } from "../../docs/support/doc-blocks.js";

export const AGENTS = ["claude-code", "codex", "opencode", "qwen-code", "pi"] as const;
export type AgentName = (typeof AGENTS)[number];

/** The address the pages show: `forge-ts proxy`'s default listen address. */
export const DOC_PROXY_URL = "http://127.0.0.1:8081";

export interface AgentSetup {
  /** Files to write before the run: `home` (under HOME) or `project` (the working directory). */
  files: { base: "home" | "project"; path: string; text: string }[];
  env: Record<string, string>;
  /** A shell command line. */
  run: string;
}

const unquote = (value: string): string => value.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");

/** `export NAME=value` lines (comments and blank lines ignored). */
export function parseEnvBlock(code: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of code.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`env block line is not \`export NAME=value\`: ${line}`);
    env[m[1]!] = unquote(m[2]!.trim());
  }
  return env;
}

/**
 * @example
 * const setup = agentSetup("opencode", "http://127.0.0.1:40123"); // setup.run === 'opencode run "Create hello.txt containing forge"'
 */
export function agentSetup(agent: AgentName, url: string, root = process.cwd()): AgentSetup {
  const file = `docs/agents/${agent}.md`;
  const blocks = blocksOf(file, readFileSync(path.join(root, file), "utf8"));
  const live = (text: string) => text.replaceAll(DOC_PROXY_URL, url);
  const setup: AgentSetup = { files: [], env: {}, run: "" };
  for (const block of blocks) {
    const target = /^file=(\S+)$/.exec(block.info)?.[1];
    if (target !== undefined) {
      const home = target.startsWith("~/");
      setup.files.push({ base: home ? "home" : "project", path: home ? target.slice(2) : target, text: live(block.code) });
    } else if (block.info === "env") {
      Object.assign(setup.env, parseEnvBlock(live(block.code)));
    } else if (block.info === "run") {
      if (setup.run !== "") throw new Error(`${file}: more than one run block`);
      setup.run = live(block.code.trim());
    }
  }
  if (setup.run === "") throw new Error(`${file}: no \`\`\`sh run block`);
  return setup;
}
