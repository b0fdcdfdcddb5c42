/**
 * Batch eval: a config file lists (backend, model, mode, ablation) rows; every row runs the
 * selected scenarios N times and each run is appended to a JSONL file as soon as it ends.
 * Re-running the same batch skips every key already in the file, so a killed batch resumes
 * exactly where it stopped.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { backendLabel, unreachable } from "../src/cli-kit/backends.js";
import { BackendError, InvalidArgumentError } from "../src/core/index.js";
import { getAblation } from "./ablation.js";
import { assertAxes, BUDGET_MODES, REASONING_REPLAYS, TOOL_CHOICES } from "./axes.js";
import { assertBackend, BACKENDS, clientFactory } from "./backends.js";
import { fixturesOf, releaseAll, withFixtures, type EvalFixture } from "./fixture.js";
import { configName, planKeys, runEval, type RunConfig } from "./harness.js";
import { openResults, type RunRecord } from "./run-record.js";
import type { InspectionSink } from "../src/runner/options.js";
import { selectScenarios } from "./scenarios/index.js";

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
 * Per config row: how many of its planned runs are in the results file.
 *
 * @example batchProgress({ config, runs: 5, out }, readRecords(out)) // [{ config, done, expected }]
 */
export function batchProgress(options: Omit<BatchOptions, "onRecord">, records: readonly RunRecord[]): { config: string; done: number; expected: number }[] {
  const have = new Set(records.map((r) => r.key));
  const scenarios = selectScenarios({ names: options.config.scenarios, tags: options.config.tags });
  return withAblation(options.config, options.ablation).map((row) => {
    const config = runConfigFor(row, options.config.seed);
    const keys = planKeys({ scenarios, runs: options.runs, config });
    return { config: configName(config), done: keys.filter((k) => have.has(k.key)).length, expected: keys.length };
  });
}

/**
 * A fixture (an MCP server) is opened before the first row whose runs need it and held until
 * the batch ends, so every row shares one opening; a dead backend is still found before it.
 *
 * @example await runBatch({ config: loadBatchConfig("sim"), runs: 5, out: "eval_results.jsonl" });
 */
export async function runBatch(options: BatchOptions): Promise<{ ran: number; skipped: number }> {
  const file = openResults(options.out, options.log);
  const skip = new Set(file.records.map((r) => r.key));
  const scenarios = selectScenarios({ names: options.config.scenarios, tags: options.config.tags });
  const rows = withAblation(options.config, options.ablation).map((row) => {
    const config = { ...runConfigFor(row, options.config.seed, options.timeoutMs), ...(options.inspect ? { inspect: options.inspect } : {}) };
    const planned = planKeys({ scenarios, runs: options.runs, config });
    return { row, config, planned, todo: planned.filter((k) => !skip.has(k.key)) };
  });
  let ran = 0;
  const skipped = rows.reduce((n, r) => n + r.planned.length - r.todo.length, 0);
  const held: EvalFixture<unknown>[] = [];
  try {
    for (const { row, config, todo } of rows) {
      if (options.signal?.aborted) break;
      if (todo.length > 0 && row.backend !== "sim") {
        // Fail before the first run, not once per run: a dead backend would turn every run into a FAIL line.
        const first = scenarios[0]!;
        const client = await withFixtures([first], () => config.makeClient({ scenario: first, instance: first.build(), seed: 0 }));
        const problem = await unreachable(client, backendLabel(row));
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
    await releaseAll(held);
  }
  return { ran, skipped };
}
