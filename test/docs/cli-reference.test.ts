/**
 * docs/cli.md is what the commands' own --help prints today (`npm run docs:cli` rewrites it),
 * and the docs mention every command that `forge-ts --help` lists.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLI_REFERENCE, commandsOf, renderCliReference } from "./support/docs-cli.js";
import { cliArgs } from "../support/cli.js";
import { docFiles, readDoc } from "./support/doc-blocks.js";

describe("the CLI reference", () => {
  it("docs/cli.md matches every command's --help (stale? run npm run docs:cli)", async () => {
    expect(readFileSync(CLI_REFERENCE, "utf8")).toBe(await renderCliReference((script, args) => cliArgs(script, ...args)));
  }, 180_000);

  it("every command has a section, and a page beside the reference names it", () => {
    const reference = readFileSync(CLI_REFERENCE, "utf8");
    const top = /## forge-ts\n\n```text\n([\s\S]*?)```/.exec(reference)?.[1] ?? "";
    const commands = commandsOf(top);
    expect(commands).toEqual(expect.arrayContaining(["demo", "proxy", "run", "runs", "eval", "eval-batch", "report", "mcp", "visualize", "worker"]));
    const prose = docFiles(".").filter((f) => f !== "docs/cli.md").map((f) => readDoc(".", f)).join("\n");
    const unnamed = commands.filter((c) => c !== "demo" && !prose.includes(`forge-ts ${c}`));
    expect(unnamed).toEqual([]);
    expect(prose).toContain("forge-ts demo");
  });
});
