/**
 * The help keeps its word: every documented command answers `--help` with exit 0 and a usage
 * line, and every flag a command's help names is one its parser accepts (in-process; the
 * processes' --help are test/docs/cli-reference.test.ts's).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoMain } from "../../src/cli/demo.js";
import { mcpMain } from "../../src/cli/mcp.js";
import { proxyMain } from "../../src/cli/proxy.js";
import { runMain, runsMain } from "../../src/cli/runs.js";
import { visualizeMain } from "../../src/cli/visualize.js";
import { workerMain } from "../../src/cli/worker.js";
import { batchMain } from "../../eval/cli/batch.js";
import { reportMain } from "../../eval/cli/report.js";
import { evalMain } from "../../eval/cli/run.js";


type Main = (args: string[]) => unknown;
const COMMANDS: Record<string, Main> = {
  demo: (a) => demoMain(a, "forge-ts demo"),
  proxy: (a) => proxyMain(a),
  run: (a) => runMain(a),
  runs: (a) => runsMain(a),
  eval: (a) => evalMain(a, "forge-ts eval"),
  "eval-batch": (a) => batchMain(a, "forge-ts eval-batch"),
  report: (a) => reportMain(a, "forge-ts report"),
  mcp: (a) => mcpMain(a, "test"),
  visualize: (a) => visualizeMain(a, process),
  worker: (a) => workerMain(a),
};

afterEach(() => vi.restoreAllMocks());

/** The help a main prints for `--help`, and its result (0 or nothing is success). */
async function helpOf(main: Main, args: string[]): Promise<{ ok: boolean; text: string }> {
  let text = "";
  vi.spyOn(console, "log").mockImplementation((...parts: unknown[]) => void (text += `${parts.join(" ")}\n`));
  try {
    const code = await main(args);
    return { ok: code === 0 || code === undefined, text };
  } catch {
    return { ok: false, text };
  } finally {
    vi.restoreAllMocks();
  }
}

/**
 * The flags a help documents for its own command: the option rows (the words before the
 * description, `--a, --b   as for …` included), the usage lines and `forge-ts <command> …`
 * lines; not the other commands it points to ("see forge-ts run --help").
 */
function documentedFlags(help: string, command: string): string[] {
  const flags = new Set<string>();
  let inUsage = false;
  for (const raw of help.split("\n")) {
    const line = raw.trim();
    inUsage = /^usage:/i.test(line) || (inUsage && raw.startsWith(" ") && line !== "");
    const own = inUsage || line.startsWith(`forge-ts ${command} `) ? line : line.startsWith("-") ? line.split(/\s{2,}/)[0]! : "";
    for (const m of own.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) flags.add(m[0]);
  }
  return [...flags];
}

describe("--help of every command", () => {
  // In-process: test/docs/cli-reference.test.ts runs every one of these --help as a process
  // (forge-ts, each command, npm run bench) and compares the text with docs/cli.md.
  it.each(Object.entries(COMMANDS))("forge-ts %s --help exits 0 with a usage line", async (_command, main) => {
    const { ok, text } = await helpOf(main, ["--help"]);
    expect(ok).toBe(true);
    expect(text).toMatch(/^usage: /im);
  });

  it.each(Object.entries(COMMANDS))("every flag forge-ts %s --help names is accepted by its parser", async (command, main) => {
    const { ok, text } = await helpOf(main, ["--help"]);
    expect(ok).toBe(true);
    const flags = documentedFlags(text, command).filter((f) => f !== "--help");
    expect(flags.length).toBeGreaterThan(0);
    const refused: string[] = [];
    for (const flag of flags) {
      // A value-taking flag takes "1"; a boolean one is given alone. Either way the help comes next.
      const accepted = (await helpOf(main, [flag, "1", "--help"])).ok || (await helpOf(main, [flag, "--help"])).ok;
      if (!accepted) refused.push(flag);
    }
    expect(refused).toEqual([]);
  });

  it("finds the flags of option rows and usage lines, not those of other commands", () => {
    const help = "Usage: forge-ts x --a <n> [--b]\n\n  --c <v>     see forge-ts run --help\n  --d, --e    as for forge-ts y --f\n  forge-ts x sub [--g]\nText with --h.";
    expect(documentedFlags(help, "x")).toEqual(["--a", "--b", "--c", "--d", "--e", "--g"]);
  });
});
