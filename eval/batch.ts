/**
 * Batch eval: a config file lists (backend, model, mode, ablation) rows; every row runs the
 * selected scenarios N times and each run is appended to a JSONL file as soon as it ends.
 * Re-running the same batch skips every key the file holds at the current generation, so a
 * killed batch resumes exactly where it stopped, and a batch after a generation bump redoes
 * every run (appending; the older records stay and reports leave them out).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { backendLabel, unreachable } from "../src/cli-kit/backends.js";
import { BackendError, InvalidArgumentError, ServerError } from "../src/core/index.js";
import { getAblation } from "./ablation.js";
import { assertAxes, BUDGET_MODES, REASONING_REPLAYS, TOOL_CHOICES } from "./axes.js";
import { assertBackend, BACKENDS, clientFactory } from "./backends.js";
import { fixturesOf, releaseAll, withFixtures, type EvalFixture } from "./fixture.js";
import { currentKeys } from "./generation.js";
import { configName, planKeys, runEval, type RunConfig } from "./harness.js";
import { openResults, type RunRecord } from "./run-record.js";
import type { InspectionSink } from "../src/runner/options.js";
import { selectScenarios } from "./scenarios/index.js";
import { assertServerFields, ManagedServers, missingPiece, SERVER_ROW_FIELDS, serverPlan, type ServerPlan } from "./managed-server.js";

const RowSchema = z.object({
  backend: z.enum(BACKENDS),
  model: z.string().min(1),
  mode: z.string().optional(),
  ablation: z.string().default("reforged"),
  compactStrategy: z.enum(["tiered", "sliding", "none"]).default("tiered"),
  stream: z.boolean().default(false),
  think: z.boolean().optional(),
  baseUrl: z.string().optional(),
  ggufPath: z.string().optional(),
  // The config axes (eval/axes.ts); unset is the default and leaves the config's name as it was.
  toolChoice: z.enum(TOOL_CHOICES).optional(),
  reasoningReplay: z.enum(REASONING_REPLAYS).optional(),
  reasoningEffort: z.string().min(1).optional(),
  sampling: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
  recommendedSampling: z.boolean().optional(),
  budgetMode: z.enum(BUDGET_MODES).optional(),
  manualTokens: z.number().int().positive().optional(),
  // A llamaserver/llamafile row with a ggufPath and no baseUrl: the batch starts its server (eval/managed-server.ts).
  ...SERVER_ROW_FIELDS,
});

export const BatchConfigSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  seed: z.number().int().default(42),
  scenarios: z.array(z.string()).default([]),
  tags: z.array(z.string()).default([]),
  rows: z.array(RowSchema).min(1),
});
export type BatchConfig = z.infer<typeof BatchConfigSchema>;
export type BatchRow = z.infer<typeof RowSchema>;

const CONFIG_DIR = join(dirname(fileURLToPath(import.meta.url)), "configs");

/**
 * A config by name (eval/configs/<name>.json) or by path; validated, with each ablation and
 * backend checked up front so a typo fails before the first run.
 *
 * @example loadBatchConfig("sim")
 */
export function loadBatchConfig(nameOrPath: string): BatchConfig {
  const path = existsSync(nameOrPath) ? resolve(nameOrPath) : join(CONFIG_DIR, `${nameOrPath}.json`);
  if (!existsSync(path)) throw new InvalidArgumentError("config", `no batch config "${nameOrPath}" (looked for ${path})`);
  const parsed = BatchConfigSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new InvalidArgumentError("config", `${path}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const names = new Map<string, number>();
  for (const [i, row] of parsed.data.rows.entries()) {
    assertBackend(row.backend);
    getAblation(row.ablation);
    assertServerFields(row, i);
    assertAxes(row, (field) => `${path}: rows.${i}.${field}`);
    const name = configName({ ...row, ablation: { name: row.ablation } });
    const first = names.get(name);
    // Two rows with one name would share resume keys: the second would silently never run.
    if (first !== undefined) throw new InvalidArgumentError("config", `${path}: rows ${first} and ${i} are the same config (${name})`);
    names.set(name, i);
  }
  return parsed.data;
}

/**
 * Rows with the ablation replaced (`--ablation bare`); rows that differed only in their
 * ablation become one config then, and are kept once, so no resume key is planned twice.
 */
export function withAblation(config: BatchConfig, ablation: string | undefined): BatchRow[] {
  if (ablation === undefined) return config.rows;
  getAblation(ablation);
  const seen = new Set<string>();
  return config.rows
    .map((r) => ({ ...r, ablation }))
    .filter((r) => {
      const k = configName({ ...r, ablation: { name: r.ablation } });
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}

/** A row's axes, only those it sets. */
function axesOf(row: BatchRow): Partial<RunConfig> {
  return Object.fromEntries(
    (["toolChoice", "reasoningReplay", "reasoningEffort", "sampling", "recommendedSampling", "budgetMode", "manualTokens"] as const)
      .filter((key) => row[key] !== undefined)
      .map((key) => [key, row[key]]),
  );
}

/** @example runConfigFor(loadBatchConfig("sim").rows[0]!, 42).ablation.name // "reforged" */
export function runConfigFor(row: BatchRow, seed: number, timeoutMs?: number): RunConfig {
  return {
    backend: row.backend,
    model: row.model,
    ...(row.mode ? { mode: row.mode } : {}),
    ablation: getAblation(row.ablation),
    compactStrategy: row.compactStrategy,
    stream: row.stream,
    ...(row.think !== undefined ? { think: row.think } : {}),
    ...(row.baseUrl ? { baseUrl: row.baseUrl } : {}),
    ...(row.ggufPath ? { ggufPath: row.ggufPath } : {}),
    ...axesOf(row),
    seed,
    makeClient: clientFactory({
      backend: row.backend,
      model: row.model,
      ...(row.mode ? { mode: row.mode } : {}),
      ...(row.think !== undefined ? { think: row.think } : {}),
      ...(row.baseUrl ? { baseUrl: row.baseUrl } : {}),
      ...(row.ggufPath ? { ggufPath: row.ggufPath } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(row.backend === "anthropic" && process.env.ANTHROPIC_API_KEY ? { apiKey: process.env.ANTHROPIC_API_KEY } : {}),
    }),
  };
}

export interface BatchOptions {
  config: BatchConfig;
  runs: number;
  out: string;
  ablation?: string;
  /** Client request timeout (ms) for real backends. */
  timeoutMs?: number;
  onRecord?: (record: RunRecord) => void;
  log?: (line: string) => void;
  /** Every run's inspection events (visualizerInspector: watch the batch live). */
  inspect?: InspectionSink;
  /** Ctrl-C: stop after cancelling the run in flight (not recorded); the file resumes the batch. */
  signal?: AbortSignal;
}

/**
 * Per config row: how many of its planned runs the results file holds at the current
 * generation (older generations' records are runs still to do).
 *
 * @example batchProgress({ config, runs: 5, out }, readRecords(out)) // [{ config, done, expected }]
 */
export function batchProgress(options: Omit<BatchOptions, "onRecord">, records: readonly RunRecord[]): { config: string; done: number; expected: number }[] {
  const have = currentKeys(records);
  const scenarios = selectScenarios({ names: options.config.scenarios, tags: options.config.tags });
  return withAblation(options.config, options.ablation).map((row) => {
    const config = runConfigFor(row, options.config.seed);
    const keys = planKeys({ scenarios, runs: options.runs, config });
    return { config: configName(config), done: keys.filter((k) => have.has(k.key)).length, expected: keys.length };
  });
}

/**
 * A managed row's runs go to the server the batch starts; its config keeps the row's name (no
 * `+url=`: the port is where the server listens, not something the results compare).
 */
function managedRunConfig(row: BatchRow, server: ServerPlan, seed: number, timeoutMs: number | undefined): RunConfig {
  const { baseUrl: _unnamed, ...config } = runConfigFor({ ...row, baseUrl: server.clientBaseUrl }, seed, timeoutMs);
  return config;
}

/** One row as a batch runs it: its server when the batch starts one, its config, its runs. */
export interface PlannedRow {
  row: BatchRow;
  server: ServerPlan | undefined;
  config: RunConfig;
  planned: ReturnType<typeof planKeys>;
  /** The planned runs whose key is not in the results file yet. */
  todo: ReturnType<typeof planKeys>;
}

/**
 * What runBatch does, row by row, before it does it (the dry run prints this).
 *
 * @example planRows({ config: loadBatchConfig("sim"), runs: 5 }, new Set())[0]!.todo.length
 */
export function planRows(options: Pick<BatchOptions, "config" | "runs" | "ablation" | "timeoutMs" | "inspect">, done: ReadonlySet<string>): PlannedRow[] {
  const scenarios = selectScenarios({ names: options.config.scenarios, tags: options.config.tags });
  return withAblation(options.config, options.ablation).map((row) => {
    const server = serverPlan(row);
    const base = server ? managedRunConfig(row, server, options.config.seed, options.timeoutMs) : runConfigFor(row, options.config.seed, options.timeoutMs);
    const config = { ...base, ...(options.inspect ? { inspect: options.inspect } : {}) };
    const planned = planKeys({ scenarios, runs: options.runs, config });
    return { row, server, config, planned, todo: planned.filter((k) => !done.has(k.key)) };
  });
}

/**
 * A fixture (an MCP server) is opened before the first row whose runs need it and held until
 * the batch ends, so every row shares one opening; a dead backend is still found before it.
 * A managed row's server (eval/managed-server.ts) is started before the row's first run and
 * stopped when the next row needs another server or none, and when the batch ends however it
 * ends; a missing model file or server executable stops the batch before any run.
 *
 * @example await runBatch({ config: loadBatchConfig("sim"), runs: 5, out: "eval_results.jsonl" });
 */
export async function runBatch(options: BatchOptions): Promise<{ ran: number; skipped: number }> {
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}
`));
  const file = openResults(options.out, log);
  const skip = currentKeys(file.records);
  const scenarios = selectScenarios({ names: options.config.scenarios, tags: options.config.tags });
  const rows = planRows(options, skip);
  for (const { server, config, todo } of rows) {
    const missing = server && todo.length > 0 ? missingPiece(server) : undefined;
    if (missing) throw new ServerError(`${configName(config)}: ${missing}`, "");
  }
  let ran = 0;
  const skipped = rows.reduce((n, r) => n + r.planned.length - r.todo.length, 0);
  const held: EvalFixture<unknown>[] = [];
  const servers = new ManagedServers(log);
  try {
    for (const { row, server, config, todo } of rows) {
      if (options.signal?.aborted) break;
      if (todo.length > 0) {
        try {
          await servers.use(server, configName(config));
        } catch (error) {
          // Ctrl-C while the model loads: the interrupt killed the server, which is why it failed.
          if (options.signal?.aborted) break;
          throw error;
        }
      }
      if (todo.length > 0 && row.backend !== "sim") {
        // Fail before the first run, not once per run: a dead backend would turn every run into a FAIL line.
        const first = scenarios[0]!;
        const client = await withFixtures([first], () => config.makeClient({ scenario: first, instance: first.build(), seed: 0 }));
        const problem = await unreachable(client, backendLabel(server ? { ...row, baseUrl: server.clientBaseUrl } : row));
        if (problem) throw new BackendError(0, "", `${configName(config)}: ${problem}`);
      }
      for (const fixture of fixturesOf(todo.map((t) => t.scenario))) {
        if (held.includes(fixture)) continue;
        await fixture.acquire();
        held.push(fixture);
      }
      await runEval({
        scenarios,
        runs: options.runs,
        config,
        skip,
        ...(options.signal ? { signal: options.signal } : {}),
        onRecord: (record) => {
          file.append(record);
          ran++;
          options.onRecord?.(record);
        },
      });
    }
  } finally {
    try {
      await servers.stop();
    } finally {
      await releaseAll(held);
    }
  }
  return { ran, skipped };
}
