/**
 * The README's quick start is eval/examples/quick-start.ts, verbatim: the file runs as a
 * stranger would run it (tsx, `import ... from "forge-ts"`), and the README shows its code.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const FILE = "eval/examples/quick-start.ts";

/** The file without its header comment: what the README shows. */
function exampleCode(): string {
  return readFileSync(FILE, "utf8").replace(/^\/\*\*[\s\S]*?\*\/\n/, "").trim();
}

describe("quick start", () => {
  it("runs to the terminal tool's result through a rescued small-model mistake", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", FILE], { env: { ...process.env, NO_COLOR: "1" } });
    expect(stdout).toContain('retry_nudge    [UnknownTool] There is no tool named "get_weathers"');
    expect(stdout).toContain('tool_call      get_weather({"city":"Lisbon"})');
    expect(stdout.trim().split("\n").at(-1)).toBe("result: Yes: 21 °C in Lisbon.");
  }, 300_000);

  it("is what the README shows", () => {
    const readme = readFileSync("README.md", "utf8");
    const block = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block?.trim()).toBe(exampleCode());
  });
});
