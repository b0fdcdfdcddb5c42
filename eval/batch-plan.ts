/**
 * What an eval batch would do, said before doing it: the rows `--model` keeps, and the
 * `--dry-run` listing (per row: its server, managed or not, the exact command line a managed
 * one is started with, and its runs planned against those already in the results file).
 */
import { backendLabel } from "../src/cli-kit/backends.js";
import { ggufStem } from "../src/clients/llamafile.js";
import { InvalidArgumentError } from "../src/core/index.js";
import { planRows, type BatchConfig, type BatchOptions, type BatchRow, type PlannedRow } from "./batch.js";
import { configName } from "./harness.js";
import { commandLine, missingPiece, serverSteps } from "./managed-server.js";
import { currentKeys } from "./generation.js";
import type { RunRecord } from "./run-record.js";

/** The names `--model` matches a row by: its model, and its GGUF file's stem. */
const modelNames = (row: BatchRow): string[] => [row.model, ...(row.ggufPath ? [ggufStem(row.ggufPath)] : [])];

/**
 * The rows whose model (or GGUF stem) is one of `models`, all rows when none is given; a value
 * no row has is refused, naming the models the config has.
 *
 * @example rowsForModels(loadBatchConfig("ollama"), ["qwen3:8b-q4_K_M"]).length // 2 (its reforged and bare rows)
 */
export function rowsForModels(config: BatchConfig, models: readonly string[]): BatchRow[] {
  if (models.length === 0) return config.rows;
  const unknown = models.filter((m) => !config.rows.some((row) => modelNames(row).includes(m)));
  if (unknown.length > 0) {
    const known = [...new Set(config.rows.flatMap(modelNames))];
    throw new InvalidArgumentError("--model", `config "${config.name}" has no row for ${unknown.map((m) => `"${m}"`).join(", ")}; its models: ${known.join(", ")}`);
  }
  return config.rows.filter((row) => modelNames(row).some((n) => models.includes(n)));
}

/**
 * The dry run's lines: a header, three or four lines per row, a total. Nothing is started and
 * no backend is asked anything; a managed row whose model file or executable is missing gets
 * the line the real batch would stop on.
 *
 * @example dryRunLines({ config: loadBatchConfig("sim"), runs: 5, out: "r.jsonl" }, []).at(-1) // "total: 430 planned, 0 already in r.jsonl, 430 to run"
 */
export function dryRunLines(options: Pick<BatchOptions, "config" | "runs" | "out" | "ablation">, records: readonly RunRecord[]): string[] {
  const rows = planRows(options, currentKeys(records));
  const steps = serverSteps(rows.map((r) => ({ server: r.server, todo: r.todo.length })));
  const scenarios = new Set(rows.flatMap((r) => r.planned.map((k) => k.scenario.name))).size;
  const lines = [`dry run of batch ${options.config.name}: ${rows.length} row(s), ${scenarios} scenario(s), ${options.runs} run(s) each; nothing is started`];
  for (const [i, planned] of rows.entries()) {
    lines.push(configName(planned.config), ...serverLines(planned, steps[i]), `  runs     ${counts(planned.planned.length, planned.planned.length - planned.todo.length, options.out)}`);
  }
  const total = rows.reduce((n, r) => n + r.planned.length, 0);
  const todo = rows.reduce((n, r) => n + r.todo.length, 0);
  lines.push(`total: ${counts(total, total - todo, options.out)}`);
  return lines;
}

const counts = (planned: number, done: number, out: string) => `${planned} planned, ${done} already in ${out}, ${planned - done} to run`;

function serverLines({ row, server }: PlannedRow, step: "start" | "reuse" | undefined): string[] {
  if (!server) return [`  server   ${row.backend === "sim" ? "none (the simulated model)" : `not managed: ${backendLabel(row)}`}`];
  const how =
    step === "start" ? "started before the row's first run" : step === "reuse" ? "the row above's, kept running (same command)" : "not started (every run is in the file)";
  const lines = [`  server   managed, ${how}; requests to ${server.clientBaseUrl}`, `  command  ${commandLine(server.launch)}`];
  const missing = step === "start" ? missingPiece(server) : undefined;
  if (missing) lines.push(`  problem  ${missing}: the batch would stop on this before any run`);
  return lines;
}
