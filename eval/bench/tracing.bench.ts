/**
 * What tracing costs per iteration (`npm run bench -- tracing`): the runner bench's loop (an
 * LLM that answers at once, tools that do nothing, N=100) with tracing off
 * (`telemetry: { enabled: false }`), on with no provider registered (the no-op API: what every
 * user who installs no SDK pays), and on with the real SDK recording into memory
 * (BasicTracerProvider + SimpleSpanProcessor + InMemorySpanExporter), without and with message
 * content. Each figure is the best of alternated rounds (a shared machine: the minimum is the
 * least disturbed). recordContent serializes the whole history per model call, so it grows with the run.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ContextManager } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import type { TelemetryOptions } from "../../src/telemetry/telemetry-options.js";
import { WorkflowRunner } from "../../src/runner.js";
import { fig, mdRow, measure, row, type BenchRow, type BenchSuite } from "./harness.js";
import { benchWorkflow, InstantToolClient } from "./runner.bench.js";

const N = 100;
const ROUNDS = 5;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const CASES: { name: string; telemetry: TelemetryOptions }[] = [
  { name: "tracing off", telemetry: { enabled: false } },
  { name: "no provider (no-op API)", telemetry: {} },
  { name: "in-memory SDK", telemetry: { tracerProvider: provider } },
  { name: "in-memory SDK + recordContent", telemetry: { tracerProvider: provider, recordContent: true } },
];

/** One kept runner per case, as an application keeps one. */
function runnerFor(telemetry: TelemetryOptions): { runner: WorkflowRunner; client: InstantToolClient } {
  const client = new InstantToolClient(N);
  const runner = new WorkflowRunner({
    client,
    contextManager: new ContextManager({ budgetTokens: 100_000_000, strategy: new NoCompact() }),
    maxIterations: N + 1,
    maxToolRepeat: N + 1,
    telemetry,
  });
  return { runner, client };
}

async function once(kept: { runner: WorkflowRunner; client: InstantToolClient }): Promise<void> {
  kept.client.calls = 0;
  const result = await kept.runner.run(benchWorkflow, "go");
  if (result !== "done" || kept.runner.lastRunStats?.iterations !== N) throw new Error(`tracing bench run: ${String(result)}`);
  // The exporter keeps every span: drop them so memory does not grow over the measurement.
  exporter.reset();
}

export const suite: BenchSuite = {
  name: "tracing",
  async run() {
    const kept = CASES.map((c) => ({ ...c, ...runnerFor(c.telemetry), best: Number.POSITIVE_INFINITY }));
    for (const k of kept) for (let i = 0; i < 20; i++) await once(k);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? kept : [...kept].reverse();
      for (const k of order) k.best = Math.min(k.best, await measure(() => once(k), { warmup: 2, minIterations: 10, minMs: 200 }));
    }
    const off = (kept[0]!.best * 1000) / N;
    const rows: BenchRow[] = [];
    for (const k of kept) {
      const us = (k.best * 1000) / N;
      rows.push({ suite: "tracing", case: `${k.name} N=${N}`, value: us, unit: "µs/iter", note: `run ${k.best.toFixed(2)} ms; ${k === kept[0] ? "baseline" : `+${(us - off).toFixed(1)} µs/iter over tracing off`}` });
    }
    rows.push({ suite: "tracing", case: "no-op API / tracing off", value: row(rows, `no provider (no-op API) N=${N}`).value / off, unit: "×", note: `best of ${ROUNDS} alternated rounds; on a shared machine differences under ~10% are noise` });
    rows.push({ suite: "tracing", case: "in-memory SDK / tracing off", value: row(rows, `in-memory SDK N=${N}`).value / off, unit: "×", note: "1 run span + 2 spans (chat, execute_tool) per iteration, recorded" });
    return rows;
  },
  readme(rows) {
    const v = (name: string) => fig(row(rows, `${name} N=${N}`).value);
    return [
      mdRow("tracing", `µs per iteration, N=${N}: off / no provider / in-memory SDK / + content`, `${v("tracing off")} / ${v("no provider (no-op API)")} / ${v("in-memory SDK")} / ${v("in-memory SDK + recordContent")}`, "cost of the no-op API and of recording"),
    ];
  },
};
