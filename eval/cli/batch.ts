/**
 * `npm run eval:batch -- --config sim --runs 5 [--out eval_results.jsonl] [--ablation bare] [--model m ...] [--progress] [--dry-run]`
 * Appends one JSONL line per run and resumes from the file; starts and stops the llama-server of
 * each GGUF row without a baseUrl; `--progress` and `--dry-run` only report.
 */
import { INTERRUPTED_EXIT, onInterrupt } from "../../src/cli-kit/interrupt.js";
import { shellWord } from "../../src/cli-kit/resume-command.js";
import { isMainModule, runCli } from "../../src/cli-kit/run-cli.js";
import { InvalidArgumentError } from "../../src/core/index.js";
import { getAblation } from "../ablation.js";
import { batchProgress, loadBatchConfig, runBatch } from "../batch.js";
import { createProgress } from "../progress.js";
import { readRecords } from "../run-record.js";
import { connectVisualizer, DEFAULT_VISUALIZER_URL } from "../../visualizer/inspector.js";
import { rowsForModels, dryRunLines } from "../batch-plan.js";
import { isManaged } from "../managed-server.js";
import { count, int, many, one, outFile, parseFlags } from "./args.js";

const SPEC = { config: "one", runs: "one", out: "one", ablation: "one", progress: "bool", "dry-run": "bool", model: "many", seed: "one", timeout: "one", visualize: "bool", "visualizer-url": "one", queue: "one", help: "bool" } as const;

const help = (command: string) => `usage: ${command} --config <name|path> --runs N [--out file.jsonl] [--ablation preset] [--model m ...] [--seed S] [--timeout ms] [--progress] [--dry-run] [--visualize] [--queue redis://...]

  --config    a name in eval/configs/ or a path; rows that would share a name are an error.
              A row may set the config axes of \`eval\` (toolChoice auto|any, reasoningReplay,
              reasoningEffort, sampling {k: v}, recommendedSampling, budgetMode
              scenario|backend|manual with manualTokens): each is checked when the config
              loads and named in the row's config when not the default (e.g. @bare+any)
  --out       JSONL results file (default eval_results.jsonl); runs it holds at the current
              suite generation are skipped, so a killed batch resumes where it stopped (an
              incomplete last line is redone); runs of older generations are redone, appended
  --model     only the rows whose model or GGUF file stem is one of these (a value no row has
              is refused, naming the config's models)
  --progress  only report how many planned runs each row has in the file at the current
              generation, then exit
  --dry-run   print each row's config name, its server (managed or not, and the exact command
              a managed one is started with) and its runs planned vs already in --out, then
              exit; nothing is started and no backend is asked anything
  --timeout   per backend request: headers wait and idle gap, ms (default 300000)
  --queue     enqueue the runs on Redis (BullMQ) for \`forge-ts worker --eval <backends>\` processes
              on any machine, and write their records here as they come back; prints the
              queue's counts as it goes (not with managed rows: the workers bring their servers)
  --visualize stream every run to the visualizer (forge-ts visualize) at --visualizer-url
              (default http://127.0.0.1:4848, or FORGE_VISUALIZER_URL)

A llamaserver or llamafile row with a ggufPath and no baseUrl is managed: the batch starts its
server (the row's binary, else FORGE_LLAMA_SERVER, else llama-server on PATH; --jinja unless
mode is prompt; the row's port, default 8080, extraFlags and ctxOverride), waits until it is
ready, runs the row, and stops it when the next row needs another server or none, at the end,
on an error and on Ctrl-C. Consecutive rows with the same command share one start. A missing
model file or executable stops the batch before any run (exit 1), as does a server that does
not start. Each real backend is asked for its model list before its first run; if it does not
answer the batch stops there (exit 1). Ctrl-C cancels the run in flight (not recorded), stops,
and prints the command that resumes the batch. Exit codes: 0 done, 1 a backend is unreachable,
a server did not start or a run could not start, 2 bad flags or config (an unknown ablation,
scenario, tag or --model included), 130 interrupted.`;

/** `npm run eval:batch --` in a checkout, `forge-ts eval-batch` from the package. */
export async function batchMain(argv: readonly string[], command = "npm run eval:batch --"): Promise<number | void> {
  const p = parseFlags(argv, SPEC);
  if (p.flags.help) return void console.log(help(command));
  const name = one(p, "config");
  if (!name) throw new InvalidArgumentError("--config", "required (a name in eval/configs/ or a path)");
  const config = loadBatchConfig(name);
  const seed = one(p, "seed");
  if (seed !== undefined) config.seed = int(p, "seed", config.seed);
  const runs = count(p, "runs", 10);
  const out = outFile(one(p, "out") ?? "eval_results.jsonl");
  const ablation = one(p, "ablation");
  if (ablation !== undefined) getAblation(ablation);
  const timeoutMs = one(p, "timeout") === undefined ? undefined : count(p, "timeout", 0);
  config.rows = rowsForModels(config, many(p, "model"));
  const options = { config, runs, out, ...(ablation ? { ablation } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
  const queue = one(p, "queue");
  const managed = config.rows.filter(isManaged);
  if (queue !== undefined && managed.length > 0) {
    throw new InvalidArgumentError("--queue", `the workers run the queued rows against their own servers; ${managed.length} row(s) of "${config.name}" have a ggufPath and no baseUrl (run them without --queue, or give them the workers' baseUrl)`);
  }

  if (p.flags["dry-run"]) {
    for (const line of dryRunLines(options, readRecords(out))) console.log(line);
    return;
  }

  if (p.flags.progress) {
    for (const row of batchProgress(options, readRecords(out))) {
      const pctDone = row.expected === 0 ? 100 : Math.round((row.done / row.expected) * 100);
      console.log(`${row.config.padEnd(48)} ${String(row.done).padStart(6)}/${row.expected}  ${pctDone}%`);
    }
    return;
  }
  const url = one(p, "visualizer-url") ?? (process.env.FORGE_VISUALIZER_URL || DEFAULT_VISUALIZER_URL);
  if (queue !== undefined && p.flags.visualize) throw new InvalidArgumentError("--visualize", "not with --queue: the workers run the batch (give them the inspector)");
  const inspect = p.flags.visualize ? await connectVisualizer(url) : undefined;
  const total = batchProgress(options, readRecords(out)).reduce((n, r) => n + (r.expected - r.done), 0);
  const progress = createProgress({ total });
  // Queued runs belong to the workers: Ctrl-C keeps its default there (the queue keeps them).
  const interrupt = queue === undefined ? onInterrupt() : undefined;
  const { ran, skipped } =
    queue === undefined
      ? await runBatch({ ...options, onRecord: (r) => progress.tick(r), signal: interrupt!.signal, ...(inspect ? { inspect } : {}) }).finally(() => interrupt!.dispose())
      : await (await import("../queue.js")).runQueuedBatch({
          ...options,
          redis: queue,
          onRecord: (r) => progress.tick(r),
          onCounts: (c) => console.error(`queue: ${c.waiting} queued, ${c.active} active, ${c.completed} done, ${c.failed} failed`),
        });
  progress.done();
  if (interrupt?.interrupted) {
    // The file is the batch's state: the same command skips what is in it.
    console.error(`interrupted: ${ran} run(s) appended to ${out}; continue with: ${command} ${argv.map(shellWord).join(" ")}`);
    return INTERRUPTED_EXIT;
  }
  console.log(`batch ${config.name}: ${ran} run(s) appended to ${out}, ${skipped} already there`);
}

if (isMainModule(import.meta.url)) runCli(batchMain, process.argv.slice(2));
