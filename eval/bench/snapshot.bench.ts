/**
 * Snapshot persist + restore of a 200-message run (`npm run bench -- snapshot`).
 *
 * The run is parked mid-flight: 99 iterations of `step` (each a tool call plus a 200-char
 * result) and then the 100th LLM call never answers, so the machine waits in `inferring` with
 * an in-flight `infer` child — the state a crash or deploy would interrupt. Then:
 * - persist = `JSON.stringify(runner.snapshot())`;
 * - restore = `JSON.parse` + `runner.resume(...)` until the restored actor has re-issued the
 *   in-flight LLM call (the client's `send` is entered): machine build, actor creation from the
 *   snapshot, snapshot checks, start, and re-serialization of the 200 messages to the wire.
 * Each restored run is then stopped (not timed). Target: persist + restore ≤ 5 ms.
 */
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import { WorkflowCancelledError } from "../../src/core/errors.js";
import type { LLMClient, LLMResponse, SendOptions } from "../../src/core/llm.js";
import type { ApiFormat, WireMessage } from "../../src/core/wire-messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import type { PersistedRun } from "../../src/persistence/snapshot.js";
import { WorkflowRunner } from "../../src/runner.js";
import { fig, mdRow, measure, row, type BenchRow, type BenchSuite } from "./harness.js";

const ANSWERED = 99;
const SAMPLES = 200;
const LOREM = "Row 17: supplier ACME, SKU 4411, unit price 10.69 USD at MOQ 100, lead time 14 days, rating 4.2/5. ";

/** A realistic 200-character tool result that differs per call. */
const resultText = (i: number) => `[${i}] ${LOREM.repeat(3)}`.slice(0, 200);

const workflow = new Workflow({
  name: "snapshot-bench",
  tools: {
    step: defineTool({ name: "step", description: "Look up one row", parameters: z.object({ i: z.number() }), execute: async ({ i }) => resultText(i) }),
    finish: defineTool({ name: "finish", description: "End the run", parameters: z.object({}), execute: async () => "done" }),
  },
  terminalTool: "finish",
  systemPromptTemplate: "You audit supplier rows. Call step for each row, then finish.",
});

/**
 * Answers `answered` calls at once with `step`, then parks: the next call stays pending until
 * its signal aborts. `parked` resolves (with performance.now()) when a call parks.
 */
class ParkingClient implements LLMClient {
  readonly apiFormat: ApiFormat = "openai";
  calls = 0;
  #onPark: ((at: number) => void) | undefined;
  constructor(readonly answered: number) {}

  /** Resolves at the moment the next call parks. */
  nextPark(): Promise<number> {
    return new Promise((resolve) => (this.#onPark = resolve));
  }

  send(messages: WireMessage[], _tools?: unknown, options?: SendOptions): Promise<LLMResponse> {
    const i = this.calls++;
    if (i < this.answered) {
      return Promise.resolve({ type: "tool_calls", toolCalls: [{ tool: "step", args: { i }, id: `c${i}` }], usage: { inputTokens: messages.length, outputTokens: 5 } });
    }
    const at = performance.now();
    this.#onPark?.(at);
    this.#onPark = undefined;
    return new Promise((_, reject) => {
      const signal = options?.signal;
      if (!signal) throw new Error("ParkingClient: the runner must pass an abort signal");
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }

  async getContextLength(): Promise<number | undefined> {
    return undefined;
  }
}

function makeRunner(client: LLMClient): WorkflowRunner {
  return new WorkflowRunner({
    client,
    contextManager: new ContextManager({ budgetTokens: 10_000_000, strategy: new NoCompact() }),
    maxIterations: ANSWERED + 10,
  });
}

/** Stop a runner whose run is parked and check that its promise rejects as a cancellation. */
async function stopParked(runner: WorkflowRunner, run: Promise<unknown>): Promise<void> {
  runner.stop("bench done");
  await run.then(
    (value) => {
      throw new Error(`parked run settled with ${String(value)} instead of being cancelled`);
    },
    (error: unknown) => {
      if (!(error instanceof WorkflowCancelledError)) throw error;
    },
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export const suite: BenchSuite = {
  name: "snapshot",
  async run() {
    const client = new ParkingClient(ANSWERED);
    const runner = makeRunner(client);
    const parked = client.nextPark();
    const run = runner.run(workflow, "Audit the rows.");
    await parked;
    const live = runner.snapshot();
    if (live.value !== "inferring" || live.context.messages.length !== 2 + 2 * ANSWERED) {
      throw new Error(`expected a run parked in inferring with ${2 + 2 * ANSWERED} messages, got ${JSON.stringify(live.value)} / ${live.context.messages.length}`);
    }
    const json = JSON.stringify(runner.snapshot());

    const persistMs = await measure(() => JSON.stringify(runner.snapshot()), { warmup: 50, minIterations: 200, minMs: 300 });
    const getSnapshotMs = await measure(() => runner.snapshot(), { warmup: 50, minIterations: 200, minMs: 200 });

    // Restore: a fresh runner per sample would measure the same work; one runner is reused and
    // each restored run is stopped before the next sample.
    const restoreClient = new ParkingClient(0);
    const restorer = makeRunner(restoreClient);
    const restoreSamples: number[] = [];
    const parseSamples: number[] = [];
    for (let k = 0; k < SAMPLES + 20; k++) {
      const reissued = restoreClient.nextPark();
      const t0 = performance.now();
      const parsed = JSON.parse(json) as PersistedRun;
      const t1 = performance.now();
      const resumed = restorer.resume(parsed, workflow);
      const t2 = await reissued;
      const restored = restorer.snapshot();
      if (restored.value !== "inferring" || restored.context.messages.length !== live.context.messages.length) {
        throw new Error(`restored run is in ${JSON.stringify(restored.value)} with ${restored.context.messages.length} messages`);
      }
      await stopParked(restorer, resumed);
      if (k >= 20) {
        restoreSamples.push(t2 - t0);
        parseSamples.push(t1 - t0);
      }
    }
    await stopParked(runner, run);

    const restoreMs = median(restoreSamples);
    const parseMs = median(parseSamples);
    const messages = live.context.messages.length;
    return [
      { suite: "snapshot", case: `persist (${messages} msgs)`, value: persistMs, unit: "ms", note: `JSON.stringify(runner.snapshot()); getPersistedSnapshot alone ${getSnapshotMs.toFixed(3)} ms` },
      {
        suite: "snapshot",
        case: `restore (${messages} msgs)`,
        value: restoreMs,
        unit: "ms",
        note: `JSON.parse ${parseMs.toFixed(3)} ms + resume() until the in-flight infer re-calls the client; median of ${SAMPLES}`,
      },
      { suite: "snapshot", case: "persist + restore", value: persistMs + restoreMs, unit: "ms", note: "target <= 5 ms" },
      { suite: "snapshot", case: "snapshot size", value: Buffer.byteLength(json) / 1024, unit: "KB", note: `${messages} messages, parked in inferring, 200-char tool results` },
    ] satisfies BenchRow[];
  },
  readme(rows) {
    const persist = rows.find((r) => r.case.startsWith("persist ("));
    const restore = rows.find((r) => r.case.startsWith("restore ("));
    if (!persist || !restore) throw new Error("snapshot bench rows are missing");
    const messages = persist.case.match(/\d+/)?.[0];
    const size = row(rows, "snapshot size").value;
    return [
      mdRow(
        "snapshot",
        `persist + restore of a ${messages}-message run parked in \`inferring\` (${fig(size)} KB)`,
        `${fig(persist.value)} + ${fig(restore.value)} = ${fig(row(rows, "persist + restore").value)} ms`,
        "≤ 5 ms",
      ),
    ];
  },
};
