/**
 * What durability costs per committed step, store by store, against the physical floor measured
 * in the same run (one 1 KB append + fsync): a workflow of N iterations (one no-op tool call
 * each, an instant model) runs on the store, and every commit is timed and weighed as the store
 * is called. Also what one lease renewal costs. Used by `npm run bench -- durability`.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import type { LLMClient, LLMResponse } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import type { Commit, RunStore } from "../../src/persistence/run-store.js";
import { WorkflowRunner } from "../../src/runner.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** One 1 KB append + fsync on `dir`'s disk, median of `samples` (ms). */
export function appendFsyncFloor(dir: string, samples = 300): number {
  const file = path.join(dir, "floor.log");
  const line = Buffer.from("x".repeat(1023) + "\n");
  const fd = openSync(file, "a");
  const times: number[] = [];
  try {
    for (let i = 0; i < samples + 20; i++) {
      const t0 = performance.now();
      writeSync(fd, line);
      fsyncSync(fd);
      if (i >= 20) times.push(performance.now() - t0);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  return median(times);
}

/** The same append + fsync through fs.promises (the thread pool), as an async store must do it: median (ms). */
export async function asyncAppendFloor(dir: string, samples = 300): Promise<number> {
  const file = path.join(dir, "floor-async.log");
  const line = Buffer.from("x".repeat(1023) + "\n");
  const handle = await open(file, "a");
  const times: number[] = [];
  try {
    for (let i = 0; i < samples + 20; i++) {
      const t0 = performance.now();
      await handle.write(line);
      await handle.datasync();
      if (i >= 20) times.push(performance.now() - t0);
    }
  } finally {
    await handle.close();
    rmSync(file, { force: true });
  }
  return median(times);
}

const workflow = new Workflow({
  name: "commit-cost",
  tools: {
    step: defineTool({ name: "step", description: "one row", parameters: z.object({ i: z.number() }), execute: async ({ i }) => `row ${i}: ${"supplier ACME, SKU 4411, 10.69 USD ".repeat(5)}` }),
    finish: defineTool({ name: "finish", description: "end", parameters: z.object({}), execute: async () => "done" }),
  },
  terminalTool: "finish",
  systemPromptTemplate: "Call step for each row, then finish.",
});

function client(iterations: number): LLMClient {
  let calls = 0;
  return {
    apiFormat: "openai",
    async send(_messages: WireMessage[]): Promise<LLMResponse> {
      const i = calls++;
      return i < iterations - 1
        ? { type: "tool_calls", toolCalls: [{ tool: "step", args: { i }, id: `c${i}` }], usage: { inputTokens: 10, outputTokens: 5 } }
        : { type: "tool_calls", toolCalls: [{ tool: "finish", args: {}, id: "end" }], usage: { inputTokens: 10, outputTokens: 5 } };
    },
    async getContextLength() {
      return undefined;
    },
  };
}

/**
 * `store` with every durable commit reported to `after` (with how long it took); everything else
 * goes to the store itself (its private fields need it as `this`).
 */
export function observeCommits(store: RunStore, after: (commit: Commit, ms: number) => void): RunStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (key !== "commit") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return async (commit: Commit) => {
        const t0 = performance.now();
        await target.commit(commit);
        after(commit, performance.now() - t0);
      };
    },
  });
}

export interface CommitCost {
  iterations: number;
  commits: number;
  /** Mean and median time of one commit, as the runner waited for it (ms). */
  meanMs: number;
  medianMs: number;
  /** Mean bytes of one commit's record (whole snapshots included); of the commits that carried a delta or events only; how many were whole. */
  meanBytes: number;
  meanDeltaBytes: number;
  wholeCommits: number;
  /** Wall time of the run over its iterations, with the store (ms per iteration). */
  perIterationMs: number;
}

/** Run an N-iteration workflow on `store`, timing and weighing every commit. */
export async function commitCost(store: RunStore, iterations: number, runId: string): Promise<CommitCost> {
  const times: number[] = [];
  const bytes: number[] = [];
  const deltaBytes: number[] = [];
  let whole = 0;
  const timed = observeCommits(store, (commit, ms) => {
    times.push(ms);
    const { runId: _id, ...record } = commit;
    const size = JSON.stringify(record).length;
    bytes.push(size);
    if (commit.snapshot) whole++;
    else deltaBytes.push(size);
  });
  const runner = new WorkflowRunner({ client: client(iterations), contextManager: new ContextManager({ budgetTokens: 10_000_000, strategy: new NoCompact() }), store: timed, maxIterations: iterations + 5 });
  const t0 = performance.now();
  await runner.run(workflow, "Audit the rows.", { runId });
  const wall = performance.now() - t0;
  return { iterations, commits: times.length, meanMs: mean(times), medianMs: median(times), meanBytes: mean(bytes), meanDeltaBytes: mean(deltaBytes), wholeCommits: whole, perIterationMs: wall / iterations };
}

/** The same workflow without a store: what the loop costs by itself (ms per iteration). */
export async function withoutStore(iterations: number): Promise<number> {
  const runner = new WorkflowRunner({ client: client(iterations), contextManager: new ContextManager({ budgetTokens: 10_000_000, strategy: new NoCompact() }), maxIterations: iterations + 5 });
  const t0 = performance.now();
  await runner.run(workflow, "Audit the rows.");
  return (performance.now() - t0) / iterations;
}

/** Median time of one lease renewal (ms). */
export async function renewalCost(store: RunStore, samples = 100): Promise<number> {
  const lease = await store.lock("renewal-bench");
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      await lease.renew();
      times.push(performance.now() - t0);
    }
  } finally {
    await lease.release();
  }
  return median(times);
}

export const scratchDir = () => mkdtempSync(path.join(tmpdir(), "forge-commit-cost-"));
