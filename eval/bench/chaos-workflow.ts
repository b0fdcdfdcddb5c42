/**
 * What the chaos harness's workers run, shared by the harness (chaos-harness.ts) and each worker
 * process (chaos-worker.ts): the timings, the stores, the "chaos" workflow and its model.
 *
 * A turn of the workflow: the model calls `step` twice in one batch, then `step` once more, then
 * the terminal `finish` with the texts of every user message of the conversation, oldest first:
 * a session turn's result names the turns before it in the order the store's history holds
 * them, so a result shows which turns ran before it. A turn whose text starts with "fail" asks
 * for steps that throw: the run fails with ToolExecutionError after its second failed batch.
 *
 * Tools log `start <key> <tool>` and `end <key> <tool>` to the effects file and sleep a few ms
 * in between, so that faults land mid-call.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import type { LLMClient, LLMResponse } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { PostgresRunStore } from "../../src/persistence/postgres-run-store.js";
import type { RunStatus, RunStore } from "../../src/persistence/run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import type { WorkflowRunnerOptions } from "../../src/runner/options.js";

export const CHAOS_WORKFLOW = "chaos";

/**
 * Short on purpose: a dead worker's run moves on after the job lock (BullMQ hands the job to
 * another worker) and the store lease (the new worker may drive the run) have both run out. The
 * session backstop (a parked turn wakes by itself after it, which matters only when the worker
 * that should have released the turn before died in the hand-over) is scaled down like the lock
 * (default 60 s for a 30 s lock).
 */
export const CHAOS_TIMING = { leaseMs: 1_000, lockDurationMs: 1_500, sessionBackstopMs: 3_000, concurrency: 2 } as const;

export type ChaosStoreKind = "file" | "sql" | "postgres";

/** The store at `location`: a directory (file), a directory holding runs.db (sql), or a postgres:// URL. */
export function openChaosStore(kind: ChaosStoreKind, location: string, leaseMs?: number): RunStore {
  const lease = leaseMs === undefined ? {} : { leaseMs };
  if (kind === "file") return new FileRunStore({ dir: location, ...lease });
  if (kind === "postgres") return new PostgresRunStore({ url: location, ...lease });
  mkdirSync(location, { recursive: true });
  return new SqlRunStore({ url: `file:${path.join(location, "runs.db")}`, ...lease });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The chaos workflow, its tools noting their effects with `note` (a line, stamped by the caller). */
export function createChaosWorkflow(note: (line: string) => void): Workflow {
  const step = defineTool({
    name: "step",
    description: "a side-effecting step",
    parameters: z.object({ n: z.number(), fail: z.boolean().optional() }),
    execute: async ({ n, fail }, ctx) => {
      note(`start ${ctx.idempotencyKey} step`);
      await sleep(2 + (n % 3) * 3);
      note(`end ${ctx.idempotencyKey} step`);
      if (fail) throw new Error(`step ${n} fails, as the turn asked`);
      return { n };
    },
  });
  const finish = defineTool({
    name: "finish",
    description: "report the conversation's user texts",
    parameters: z.object({ texts: z.array(z.string()) }),
    execute: async ({ texts }, ctx) => {
      note(`start ${ctx.idempotencyKey} finish`);
      await sleep(3);
      note(`end ${ctx.idempotencyKey} finish`);
      return { texts };
    },
  });
  return new Workflow({ name: CHAOS_WORKFLOW, tools: { step, finish }, requiredSteps: ["step"], terminalTool: "finish", systemPromptTemplate: "Run the steps, then finish." });
}

const textOf = (m: WireMessage) => (typeof m.content === "string" ? m.content : "");

/**
 * The model: a pure function of the conversation (so a resumed run is asked the same questions
 * and answers the same), answering after a millisecond or two so that faults land in inference
 * too; `thinkMs` more per answer makes runs last as long as a slow model's (a fault then finds
 * more runs in flight).
 */
export const chaosClient = (thinkMs = 0): LLMClient => ({
  apiFormat: "openai",
  async send(messages: WireMessage[]): Promise<LLMResponse> {
    await sleep(1 + (messages.length % 2) + thinkMs);
    const users = messages.filter((m) => m.role === "user").map(textOf);
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    const answered = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
    const call = (tool: string, args: Record<string, unknown>) => ({ tool, args });
    if (users.at(-1)?.startsWith("fail")) return { type: "tool_calls", toolCalls: [call("step", { n: answered + 1, fail: true })] };
    if (answered === 0) return { type: "tool_calls", toolCalls: [call("step", { n: 1 }), call("step", { n: 2 })] };
    if (answered === 1) return { type: "tool_calls", toolCalls: [call("step", { n: 3 })] };
    return { type: "tool_calls", toolCalls: [call("finish", { texts: users })] };
  },
  async getContextLength() {
    return undefined;
  },
});

/** Everything a worker's runner needs but the store. */
export function chaosRunnerOptions(thinkMs = 0): Omit<WorkflowRunnerOptions, "store"> {
  return { client: chaosClient(thinkMs), contextManager: new ContextManager({ budgetTokens: 200_000, strategy: new NoCompact() }), maxIterations: 10, maxToolErrors: 1 };
}

/** One run the producers enqueue; `producer` 0 or 1 says which of the two queues enqueues it. */
export interface PlannedRun {
  runId: string;
  text: string;
  sessionId?: string;
  producer: 0 | 1;
  fails: boolean;
}

/** What the producers enqueue together: a single run, or a session's turns in each producer's order. */
export interface PlannedUnit {
  sessionId?: string;
  /** Two producers enqueue this session's turns at the same time. */
  racing: boolean;
  runs: PlannedRun[];
}

/**
 * The workload: about a third single runs, the rest sessions of 2 to 6 turns; two producers
 * race on two sessions in five; one single run in twenty and one session in five has a turn
 * that fails (its later turns must then fail fast).
 */
export function planWorkload(runs: number, rng: { next(): number; int(n: number): number }): PlannedUnit[] {
  const units: PlannedUnit[] = [];
  let planned = 0;
  const run = (runId: string, fails: boolean, producer: 0 | 1, sessionId?: string): PlannedRun => ({
    runId,
    text: `${fails ? "fail" : "do"} ${runId}`,
    producer,
    fails,
    ...(sessionId === undefined ? {} : { sessionId }),
  });
  while (planned < runs) {
    const left = runs - planned;
    if (left === 1 || rng.next() < 0.35) {
      units.push({ racing: false, runs: [run(`r${planned}`, rng.next() < 0.05, 0)] });
      planned++;
      continue;
    }
    const sessionId = `s${units.length}`;
    const size = Math.min(left, 2 + rng.int(5));
    const racing = rng.next() < 0.4;
    const failAt = rng.next() < 0.2 ? rng.int(size) : -1;
    const producer = (i: number): 0 | 1 => (racing ? ((i % 2) as 0 | 1) : 0);
    units.push({ sessionId, racing, runs: Array.from({ length: size }, (_, i) => run(`${sessionId}-t${i}`, i === failAt, producer(i), sessionId)) });
    planned += size;
  }
  return units;
}

/** What a run must end with. */
export type Expectation =
  | { kind: "result"; texts: string[] }
  | { kind: "tool-failure" }
  | { kind: "failed-fast"; turn: number; failedRunId: string; failedTurn: number }
  | { kind: "unknowable"; why: string };

/**
 * Each run's expected outcome, from the turn numbers Redis gave the session's runs (racing
 * producers decide the order): turn t of a session whose turns before it all succeeded reports
 * the texts of turns 1..t; the first failing turn fails with ToolExecutionError; every later
 * turn fails fast naming it.
 */
export function expectations(unit: PlannedUnit, turns: ReadonlyMap<string, number>): Map<string, Expectation> {
  const out = new Map<string, Expectation>();
  if (unit.sessionId === undefined) {
    const r = unit.runs[0]!;
    out.set(r.runId, r.fails ? { kind: "tool-failure" } : { kind: "result", texts: [r.text] });
    return out;
  }
  const ordered = [...unit.runs].sort((a, b) => (turns.get(a.runId) ?? 0) - (turns.get(b.runId) ?? 0));
  const numbers = ordered.map((r) => turns.get(r.runId));
  if (numbers.some((n, i) => n !== i + 1)) {
    for (const r of unit.runs) out.set(r.runId, { kind: "unknowable", why: `session ${unit.sessionId} has turns ${JSON.stringify(numbers)}, not 1..${ordered.length}` });
    return out;
  }
  let failed: { runId: string; turn: number } | undefined;
  ordered.forEach((r, i) => {
    if (failed) out.set(r.runId, { kind: "failed-fast", turn: i + 1, failedRunId: failed.runId, failedTurn: failed.turn });
    else if (r.fails) {
      out.set(r.runId, { kind: "tool-failure" });
      failed = { runId: r.runId, turn: i + 1 };
    } else out.set(r.runId, { kind: "result", texts: ordered.slice(0, i + 1).map((t) => t.text) });
  });
  return out;
}

/** A run's typed error as result() rejects with it: a ForgeError's code and fields. */
export type RunError = Error & { code?: string; [field: string]: unknown };

/** How a run's job ended, as its producer saw it: a result, or the (typed) error result() rejected with. */
export type Outcome = { value: unknown } | { error: RunError };

/** The run as the store has it, or undefined when the store has no such run. */
export type StoredRun = { status: RunStatus; result?: unknown; errorCode?: string } | undefined;

export type Verdict = { kind: "correct" } | { kind: "wrong" | "lost"; why: string };

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * A run is correct only when both the producer's outcome and the store say what the
 * expectation says; lost when it has no outcome by the deadline or the store still shows it
 * active; wrong otherwise.
 */
export function judge(expected: Expectation, outcome: Outcome | undefined, stored: StoredRun): Verdict {
  if (!outcome) return { kind: "lost", why: `no final state by the deadline; store: ${JSON.stringify(stored)}` };
  if (stored?.status === "active") return { kind: "lost", why: `finished as ${describe(outcome)} but the store shows it active` };
  const wrong = (what: string): Verdict => ({ kind: "wrong", why: `expected ${what}, got ${describe(outcome)}; store: ${JSON.stringify(stored)}` });
  switch (expected.kind) {
    case "unknowable":
      return { kind: "wrong", why: expected.why };
    case "result": {
      const ok = "value" in outcome && same(outcome.value, { texts: expected.texts }) && same(stored?.result, { texts: expected.texts });
      return ok ? { kind: "correct" } : wrong(`result ${JSON.stringify({ texts: expected.texts })}`);
    }
    case "tool-failure": {
      const ok = "error" in outcome && outcome.error.code === "FORGE_TOOL_EXECUTION" && stored?.errorCode === "FORGE_TOOL_EXECUTION";
      return ok ? { kind: "correct" } : wrong("ToolExecutionError (FORGE_TOOL_EXECUTION) in the outcome and the store");
    }
    case "failed-fast": {
      const e = "error" in outcome ? outcome.error : undefined;
      const ok = e?.code === "FORGE_SESSION_TURN_FAILED" && e.failedRunId === expected.failedRunId && e.failedTurn === expected.failedTurn && e.turn === expected.turn && stored === undefined;
      return ok ? { kind: "correct" } : wrong(`SessionTurnFailedError for turn ${expected.turn} naming ${expected.failedRunId} (turn ${expected.failedTurn}), and no run in the store`);
    }
  }
}

function describe(outcome: Outcome): string {
  if ("value" in outcome) return `result ${JSON.stringify(outcome.value)}`;
  const { code, message } = outcome.error;
  return `error ${code ?? "(no code)"}: ${message.slice(0, 300)}`;
}
