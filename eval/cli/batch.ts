/**
 * `npm run eval:batch -- --config sim --runs 5 [--out eval_results.jsonl] [--ablation bare] [--progress]`
 * Appends one JSONL line per run and resumes from the file; `--progress` only reports.
 */
import { InvalidArgumentError } from "../../src/core/index.js";
import { batchProgress, loadBatchConfig, runBatch } from "../batch.js";
import { createProgress } from "../progress.js";
import { readRecords } from "../run-record.js";
import { int, one, parseFlags } from "./args.js";

const SPEC = { config: "one", runs: "one", out: "one", ablation: "one", progress: "bool", seed: "one", help: "bool" } as const;

async function main(argv: string[]): Promise<void> {
  const p = parseFlags(argv, SPEC);
  if (p.flags.help) return void console.log("usage: npm run eval:batch -- --config <name|path> --runs N [--out file.jsonl] [--ablation preset] [--seed S] [--progress]");
  const name = one(p, "config");
  if (!name) throw new InvalidArgumentError("--config", "required (a name in eval/configs/ or a path)");
  const config = loadBatchConfig(name);
  const seed = one(p, "seed");
  if (seed !== undefined) config.seed = int(p, "seed", config.seed);
  const runs = int(p, "runs", 10);
  if (runs < 1) throw new InvalidArgumentError("--runs", "must be at least 1");
  const out = one(p, "out") ?? "eval_results.jsonl";
  const ablation = one(p, "ablation");
  const options = { config, runs, out, ...(ablation ? { ablation } : {}) };

  if (p.flags.progress) {
    for (const row of batchProgress(options, readRecords(out))) {
      const pctDone = row.expected === 0 ? 100 : Math.round((row.done / row.expected) * 100);
      console.log(`${row.config.padEnd(48)} ${String(row.done).padStart(6)}/${row.expected}  ${pctDone}%`);
    }
    return;
  }
  const total = batchProgress(options, readRecords(out)).reduce((n, r) => n + (r.expected - r.done), 0);
  const progress = createProgress({ total });
  const { ran, skipped } = await runBatch({ ...options, onRecord: (r) => progress.tick(r) });
  progress.done();
  console.log(`batch ${config.name}: ${ran} run(s) appended to ${out}, ${skipped} already there`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  process.exitCode = 1;
});
