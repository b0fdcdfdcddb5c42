#!/usr/bin/env node
/** The `forge-ts` command. */
import { readFileSync } from "node:fs";
import { runCli } from "../cli-kit/run-cli.js";

const USAGE = `Usage: forge-ts <command> [options]

Commands:
  demo [options]   run the supplier-quote workflow (see: forge-ts demo --help)
  proxy [options]  OpenAI-, Anthropic- and Ollama-compatible proxy with the guardrails inside (see: forge-ts proxy --help)
  run <module> "<message>" [options]
                   run a workflow module's Workflow, checkpointed in a run store (see: forge-ts run --help)
  runs <list|show|resume|retry|replay|delete|approve|reject|answer|fork> [options]
                   the runs in a store: list, inspect, resume after a crash, decide a waiting run,
                   fork from an earlier commit (see: forge-ts runs --help)
  eval [options]   run the eval scenarios against a backend (see: forge-ts eval --help)
  eval-batch [options]
                   a resumable batch of eval configs into JSONL (see: forge-ts eval-batch --help)
  report <results.jsonl ...> [options]
                   tables, Markdown and an offline HTML dashboard from eval results (see: forge-ts report --help)
  mcp --workflow <module> --backend <name> [options]
                   serve workflows as MCP tools over stdio or Streamable HTTP (see: forge-ts mcp --help)
  visualize [options]
                   the live run visualizer: statechart, steps, budgets, timeline; replays stored runs (see: forge-ts visualize --help)
  worker --redis <url> [options]
                   a BullMQ worker: queued runs and distributed eval jobs (see: forge-ts worker --help)

Options:
  -h, --help       show this help
  -v, --version    print the version`;

/** package.json sits two levels up from src/cli and three from dist/src/cli. */
function packageVersion(): string {
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "forge-ts" && pkg.version) return pkg.version;
    } catch {
      // not at this level; try the next
    }
  }
  throw new Error("forge-ts: cannot find its package.json");
}

async function main(args: readonly string[]): Promise<number | void> {
  const [command, ...rest] = args;
  if (command === "-h" || command === "--help") {
    console.log(USAGE);
    return 0;
  }
  // No command is a usage error: the usage goes where errors go, and the exit code says so.
  if (command === undefined) {
    console.error(USAGE);
    return 2;
  }
  if (command === "-v" || command === "--version") {
    console.log(packageVersion());
    return 0;
  }
  // Each command loads only its own modules: `--help`, `--version` and a typo answer at once,
  // and `proxy` never loads the runner or the eval harness (CLI start-up is most of a short command).
  if (command === "demo") return (await import("./demo.js")).demoMain(rest, "forge-ts demo");
  if (command === "proxy") return (await import("./proxy.js")).proxyMain(rest);
  if (command === "run") return (await import("./runs.js")).runMain(rest);
  if (command === "runs") return (await import("./runs.js")).runsMain(rest);
  if (command === "mcp") return (await import("./mcp.js")).mcpMain(rest, packageVersion());
  if (command === "worker") return (await import("./worker.js")).workerMain(rest);
  if (command === "visualize") return (await import("./visualize.js")).visualizeMain(rest, process, packageVersion());
  if (command === "eval") return (await import("../../eval/cli/run.js")).evalMain(rest, "forge-ts eval");
  if (command === "eval-batch") return (await import("../../eval/cli/batch.js")).batchMain(rest, "forge-ts eval-batch");
  if (command === "report") return (await import("../../eval/cli/report.js")).reportMain(rest, "forge-ts report");
  console.error(`forge-ts: unknown command "${command}"\n\n${USAGE}`);
  return 2;
}

runCli(main, process.argv.slice(2));
