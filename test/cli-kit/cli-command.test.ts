/**
 * The words a printed command starts with, in each way forge-ts is started: from a checkout's
 * sources, by npx or an npm script, from a global install on PATH, or from a local install run
 * directly. The spawned rows are in test/cli/run-vars-cli.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliCommand, shellWord } from "../../src/cli-kit/cli-command.js";
import { REPO_ROOT } from "../support/cli-build.js";

/** A PATH directory holding an executable `forge-ts` (or, with `executable: false`, a plain file of that name). */
function binDir(executable = true): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "forge-cli-command-")), "bin");
  mkdirSync(dir);
  writeFileSync(path.join(dir, "forge-ts"), "#!/bin/sh\nexit 0\n");
  chmodSync(path.join(dir, "forge-ts"), executable ? 0o755 : 0o644);
  return dir;
}

describe("cliCommand", () => {
  it("from the sources: tsx on src/cli/main.ts, relative inside the checkout, absolute outside it", () => {
    expect(cliCommand({ source: true, cwd: REPO_ROOT })).toBe("npx tsx src/cli/main.ts");
    // A new empty directory: never one holding the checkout (a clone under /tmp is inside tmpdir()).
    const outside = mkdtempSync(path.join(tmpdir(), "forge-cli-command-cwd-"));
    expect(cliCommand({ source: true, cwd: outside })).toBe(`npx tsx ${shellWord(path.join(REPO_ROOT, "src/cli/main.ts"))}`);
    // Under vitest this module runs from its TypeScript source, as in a checkout.
    expect(cliCommand({ cwd: REPO_ROOT })).toBe("npx tsx src/cli/main.ts");
  });

  it("started by npx or an npm script: npx forge-ts, even with forge-ts on PATH (node_modules/.bin is on it for that command only)", () => {
    const PATH = binDir();
    expect(cliCommand({ source: false, env: { PATH, npm_command: "exec" } })).toBe("npx forge-ts");
    expect(cliCommand({ source: false, env: { PATH, npm_lifecycle_event: "forge" } })).toBe("npx forge-ts");
  });

  it("forge-ts when an executable forge-ts is on PATH, else npx forge-ts", () => {
    expect(cliCommand({ source: false, env: { PATH: `/nonexistent${path.delimiter}${binDir()}` } })).toBe("forge-ts");
    expect(cliCommand({ source: false, env: { PATH: binDir(false) } })).toBe("npx forge-ts");
    expect(cliCommand({ source: false, env: { PATH: "/nonexistent" } })).toBe("npx forge-ts");
    expect(cliCommand({ source: false, env: {} })).toBe("npx forge-ts");
    expect(cliCommand({ source: false, env: { PATH: "anything" }, onPath: (name, p) => name === "forge-ts" && p === "anything" })).toBe("forge-ts");
  });
});
