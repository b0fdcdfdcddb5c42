/**
 * Runner overhead per iteration (`npm run bench -- runner`): the whole loop with an LLM that
 * answers instantly and tools that do nothing, so every microsecond measured is framework cost.
 * The same loop runs through the Vercel AI SDK in the same process, alternating with ours, for a
 * ratio: AI SDK 7 (`generateText` + MockLanguageModelV4 + `stopWhen: isStepCount(N)`,
 * runner-ai-sdk7.ts) and AI SDK 6 (MockLanguageModelV3 + `stepCountIs(N)`) side by side. AI SDK 7
 * needs Node >= 22: on older Node its rows are left out with a note on stderr (run the bench with
 * Node 24 for all rows); the ratio targets (`--check`) are against AI SDK 7's rows.
 *
 * Both sides make exactly N model calls and N tool executions (N-1 × `step`, then `finish`),
 * start from a system prompt and "go", keep and resend the full history every call, and get
 * token usage from the model (so neither estimates it). Each figure is the best of several
 * alternated rounds after a warm-up: the machine is shared and the minimum is the least
 * disturbed figure. Targets: forge ≤ 0.8× AI SDK 7 per step at N=10, ≤ 0.5× at N=100 and
 * ≤ 0.2× at N=1,000; forge's per-iteration cost within 1.5× from N=10 to N=1,000 (a flat loop).
 */
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import type { LLMClient, LLMResponse } from "../../src/core/llm.js";
import type { ApiFormat } from "../../src/core/wire-messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { WorkflowRunner } from "../../src/runner.js";
import { fig, mdRow, measure, row, type BenchRow, type BenchSuite } from "./harness.js";

const SIZES = [10, 100, 1_000] as const;
const SYSTEM = "You are a benchmark agent. Call step until told otherwise, then call finish.";
const USAGE = { inputTokens: 1, outputTokens: 1 } as const;

/**
 * An honest LLMClient that answers at once: a `step` call with `i` for calls 0..total-2, then
 * `finish`. One small object per call, nothing else allocated.
 */
export class InstantToolClient implements LLMClient {
  readonly apiFormat: ApiFormat = "openai";
  calls = 0;
  constructor(readonly total: number) {}

  async send(): Promise<LLMResponse> {
    const i = this.calls++;
    if (i >= this.total) throw new Error(`InstantToolClient: call #${i} past the scripted ${this.total}`);
    if (i === this.total - 1) return { type: "tool_calls", toolCalls: [{ tool: "finish", args: {}, id: `c${i}` }], usage: USAGE };
    return { type: "tool_calls", toolCalls: [{ tool: "step", args: { i }, id: `c${i}` }], usage: USAGE };
  }

  async getContextLength(): Promise<number | undefined> {
    return undefined;
  }
}

export const benchWorkflow = new Workflow({
  name: "bench",
  tools: {
    step: defineTool({ name: "step", description: "No-op step", parameters: z.object({ i: z.number() }), execute: async () => "ok" }),
    finish: defineTool({ name: "finish", description: "End the run", parameters: z.object({}), execute: async () => "done" }),
  },
  terminalTool: "finish",
  systemPromptTemplate: SYSTEM,
});

/** A runner that allows exactly this many iterations, no compaction (the trigger is never reached). */
export function benchRunner(n: number): WorkflowRunner {
  return new WorkflowRunner({
    client: new InstantToolClient(n),
    contextManager: new ContextManager({ budgetTokens: 100_000_000, strategy: new NoCompact() }),
    maxIterations: n + 1,
    maxToolRepeat: n + 1,
  });
}

/** Runners kept across runs, as an application keeps one (its machine is built once). */
const reused = new Map<number, { runner: WorkflowRunner; client: InstantToolClient }>();

/**
 * One forge run of n iterations; throws unless it finished on `finish` after exactly n calls.
 * `reuse` runs on a kept runner (the client's script restarts); otherwise a fresh runner.
 */
export async function forgeRun(n: number, reuse = false): Promise<void> {
  let runner: WorkflowRunner;
  if (reuse) {
    let kept = reused.get(n);
    if (!kept) {
      const fresh = benchRunner(n);
      kept = { runner: fresh, client: fresh.options.client as InstantToolClient };
      reused.set(n, kept);
    }
    kept.client.calls = 0;
    runner = kept.runner;
  } else {
    runner = benchRunner(n);
  }
  const result = await runner.run(benchWorkflow, "go");
  const stats = runner.lastRunStats;
  if (result !== "done" || stats?.iterations !== n || stats.toolCalls !== n) {
    throw new Error(`forge run of ${n}: result ${String(result)}, ${stats?.iterations} iterations, ${stats?.toolCalls} tool calls`);
  }
}

const AI_USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const aiTools = {
  step: tool({ description: "No-op step", inputSchema: z.object({ i: z.number() }), execute: async () => "ok" }),
  finish: tool({ description: "End the run", inputSchema: z.object({}), execute: async () => "done" }),
};

/** The same loop in the AI SDK; throws unless it ran n steps and ended on `finish`. */
export async function aiSdkRun(n: number): Promise<void> {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      const i = calls++;
      const last = i === n - 1;
      return {
        content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: last ? "finish" : "step", input: last ? "{}" : `{"i":${i}}` }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage: AI_USAGE,
        warnings: [],
      };
    },
  });
  const result = await generateText({ model, system: SYSTEM, prompt: "go", tools: aiTools, stopWhen: stepCountIs(n) });
  const lastResult = result.steps.at(-1)?.toolResults[0];
  if (result.steps.length !== n || calls !== n || lastResult?.toolName !== "finish" || lastResult.output !== "done") {
    throw new Error(`AI SDK run of ${n}: ${result.steps.length} steps, ${calls} model calls, last ${lastResult?.toolName}`);
  }
}

/** Rounds, warm-up runs and minimum wall clock per measurement, by run length. */
function plan(n: number): { rounds: number; warmup: number; minIterations: number; minMs: number } {
  if (n <= 10) return { rounds: 7, warmup: 50, minIterations: 50, minMs: 150 };
  if (n <= 100) return { rounds: 5, warmup: 5, minIterations: 5, minMs: 200 };
  return { rounds: 3, warmup: 1, minIterations: 1, minMs: 0 };
}

/** AI SDK 7's loop, or undefined (with a note) on Node < 22, where `ai` 7 does not run. */
async function loadAiSdk7(): Promise<((n: number) => Promise<void>) | undefined> {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= 22) return (await import("./runner-ai-sdk7.js")).aiSdk7Run;
  process.stderr.write(`runner: Node ${process.versions.node} < 22, so the AI SDK 7 rows are left out (ai 7 needs Node >= 22); run the bench with Node 24 for them\n`);
  return undefined;
}

export const suite: BenchSuite = {
  name: "runner",
  async run() {
    const rows: BenchRow[] = [];
    const aiSdk7Run = await loadAiSdk7();
    // Warm every code path (JIT, module init) before any figure is taken.
    for (let k = 0; k < 20; k++) {
      await forgeRun(20);
      await aiSdkRun(20);
      await aiSdk7Run?.(20);
    }
    for (const n of SIZES) {
      const p = plan(n);
      let forgeMs = Number.POSITIVE_INFINITY;
      let keptMs = Number.POSITIVE_INFINITY;
      let aiMs = Number.POSITIVE_INFINITY;
      let ai7Ms = Number.POSITIVE_INFINITY;
      for (let round = 0; round < p.rounds; round++) {
        const opts = { warmup: round === 0 ? p.warmup : 1, minIterations: p.minIterations, minMs: p.minMs };
        const sides = [
          async () => (forgeMs = Math.min(forgeMs, await measure(() => forgeRun(n), opts))),
          async () => (keptMs = Math.min(keptMs, await measure(() => forgeRun(n, true), opts))),
          async () => (aiMs = Math.min(aiMs, await measure(() => aiSdkRun(n), opts))),
          ...(aiSdk7Run ? [async () => (ai7Ms = Math.min(ai7Ms, await measure(() => aiSdk7Run(n), opts)))] : []),
        ];
        // Alternate the order so no side always runs on a GC-dirtier heap.
        for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
      }
      const forgeUs = (forgeMs * 1000) / n;
      const keptUs = (keptMs * 1000) / n;
      const aiUs = (aiMs * 1000) / n;
      rows.push({
        suite: "runner",
        case: `forge N=${n}`,
        value: forgeUs,
        unit: "µs/iter",
        // What each side pays for: forge builds its machine + actor per run and, per iteration,
        // checks compaction (token estimate), serializes the history, validates with zod, runs guards.
        note: `run ${forgeMs.toFixed(2)} ms; machine+actor per run; per iter: token estimate, wire serialization, zod, guards, loop-break`,
      });
      rows.push({
        suite: "runner",
        case: `forge N=${n}, runner reused`,
        value: keptUs,
        unit: "µs/iter",
        note: `run ${keptMs.toFixed(2)} ms; one runner for many runs (machine built once), actor per run`,
      });
      if (aiSdk7Run) {
        const ai7Us = (ai7Ms * 1000) / n;
        rows.push({
          suite: "runner",
          case: `ai-sdk7 N=${n}`,
          value: ai7Us,
          unit: "µs/step",
          note: `run ${ai7Ms.toFixed(2)} ms; AI SDK 7 generateText + MockLanguageModelV4, isStepCount(N)`,
        });
        rows.push({ suite: "runner", case: `ratio forge reused/ai-sdk7 N=${n}`, value: keptUs / ai7Us, unit: "×", note: `target <= ${target(n)}; forge (runner reused) per iteration over AI SDK 7 per step` });
      }
      rows.push({
        suite: "runner",
        case: `ai-sdk N=${n}`,
        value: aiUs,
        unit: "µs/step",
        note: `run ${aiMs.toFixed(2)} ms; AI SDK 6 generateText: full-history prompt conversion, zod input parse, step results`,
      });
      rows.push({
        suite: "runner",
        case: `ratio forge/ai-sdk N=${n}`,
        value: forgeUs / aiUs,
        unit: "×",
        note: `best of ${p.rounds} alternated rounds each`,
      });
      rows.push({
        suite: "runner",
        case: `ratio forge reused/ai-sdk N=${n}`,
        value: keptUs / aiUs,
        unit: "×",
        note: "forge (runner reused) per iteration over AI SDK 6 per step",
      });
    }
    const [first, last] = [SIZES[0], SIZES[SIZES.length - 1]!];
    for (const reused of [false, true]) {
      const name = (n: number) => `forge N=${n}${reused ? ", runner reused" : ""}`;
      rows.push({
        suite: "runner",
        case: `flatness${reused ? " reused" : ""} N=${last}/N=${first}`,
        value: row(rows, name(last)).value / row(rows, name(first)).value,
        unit: "×",
        note: "per-iteration cost growth; target <= 1.5",
      });
    }
    return rows;
  },
  readme(rows) {
    const sizes = SIZES.map((n) => n.toLocaleString("en")).join(" / ");
    const per = (label: (n: number) => string, unit?: string) => SIZES.map((n) => fig(row(rows, label(n), unit).value)).join(" / ");
    const last = SIZES[SIZES.length - 1]!;
    return [
      mdRow("runner", `loop overhead per iteration, no-op tools, instant client, N = ${sizes} (runner reused)`, `${per((n) => `forge N=${n}, runner reused`)} µs`, ""),
      mdRow("runner", "the same, a new runner per run (machine and actor built each run)", `${per((n) => `forge N=${n}`)} µs`, ""),
      rows.some((r) => r.case.startsWith("ai-sdk7 "))
        ? mdRow("runner", "the same loop in AI SDK 7 (`generateText`, MockLanguageModelV4, `stopWhen: isStepCount(N)`)", `${per((n) => `ai-sdk7 N=${n}`)} µs`, "")
        : mdRow("runner", "the same loop in AI SDK 7", "not run (Node < 22; run the bench with Node 24)", ""),
      mdRow("runner", "the same loop in AI SDK 6 (`generateText`, MockLanguageModelV3, `stopWhen: stepCountIs(N)`)", `${per((n) => `ai-sdk N=${n}`)} µs`, ""),
      ...(rows.some((r) => r.case.startsWith("ratio forge reused/ai-sdk7 "))
        ? [mdRow("runner", "ratio forge (runner reused) / AI SDK 7", `${per((n) => `ratio forge reused/ai-sdk7 N=${n}`)}×`, SIZES.map((n) => `≤ ${target(n)}`).join(" / "))]
        : []),
      mdRow("runner", "ratio forge (runner reused) / AI SDK 6", `${per((n) => `ratio forge reused/ai-sdk N=${n}`)}×`, ""),
      mdRow(
        "runner",
        `per-iteration cost at N = ${last.toLocaleString("en")} over N = ${SIZES[0]}, reused / new runner`,
        `${fig(row(rows, `flatness reused N=${last}/N=${SIZES[0]}`).value)}× / ${fig(row(rows, `flatness N=${last}/N=${SIZES[0]}`).value)}×`,
        "≤ 1.5×",
      ),
    ];
  },
};

/** The ratio targets against AI SDK 7 (eval/bench/targets.ts checks them with --check). */
function target(n: number): string {
  return n <= 10 ? "0.8" : n <= 100 ? "0.5" : "0.2";
}
