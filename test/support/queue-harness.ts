/**
 * In-process run workers for the queue tests: the notes workflow of test/fixtures/queue-workflow.ts
 * (under any name) played by the simulated model, which a turn's text can steer: "FAIL" makes
 * the model call fail (the run ends failed), "SLOW <ms>" makes it answer late (abortably, so a
 * cancel or timeout stops it), "HOLD <name>" makes it answer only once the test calls
 * `releaseHold(name)` (abortably too): a turn that runs until the test has seen what it wants.
 */
import { Queue } from "bullmq";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { abortableDelay, abortError, throwIfAborted } from "../../src/clients/simulated-stream.js";
import { ContextManager } from "../../src/context/context-manager.js";
import type { LLMClient, LLMResponse, SendOptions } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import type { ToolSpec } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { redisOptions } from "../../src/queue/redis.js";
import { runQueueName } from "../../src/queue/run-queue.js";
import { startRunWorker, type RunWorkerOptions } from "../../src/queue/run-worker.js";
import { oracle, workflow as notes } from "../fixtures/queue-workflow.js";

/** The notes workflow under another name (another queue). */
export function notesNamed(name: string): Workflow {
  return new Workflow({ name, tools: notes.tools, requiredSteps: ["remember"], terminalTool: "reply", systemPromptTemplate: "You keep notes for the user. Always act through tools." });
}

const holds = new Map<string, { released: Promise<void>; release(): void }>();

function holdOf(name: string): { released: Promise<void>; release(): void } {
  let hold = holds.get(name);
  if (!hold) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    hold = { released, release };
    holds.set(name, hold);
  }
  return hold;
}

/** Lets the model calls of turns saying "HOLD <name>" answer (now, or at once if they come later). */
export function releaseHold(name: string): void {
  holdOf(name).release();
}

function held(name: string, signal: AbortSignal | undefined): Promise<void> {
  throwIfAborted(signal);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    void holdOf(name).released.then(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/** The simulated model, steered by the text of the turn's user message. */
export class SteeredClient implements LLMClient {
  readonly apiFormat = "openai" as const;
  readonly #model = new SimulatedClient({ oracle, workflow: notes, profile: "clean", seed: 1 });

  async send(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): Promise<LLMResponse> {
    const user = [...messages].reverse().find((m) => m.role === "user");
    const text = typeof user?.content === "string" ? user.content : "";
    const slow = /SLOW (\d+)/.exec(text);
    if (slow) await abortableDelay(Number(slow[1]), options?.signal);
    const hold = /HOLD (\S+)/.exec(text);
    if (hold) await held(hold[1]!, options?.signal);
    if (text.includes("FAIL")) throw new Error("the model is down (test)");
    return this.#model.send(messages, tools, options);
  }

  async getContextLength(): Promise<number | undefined> {
    return undefined;
  }
}

export function startTestWorker(redis: string, store: RunStore, workflows: Workflow[] = [notes], extra: Partial<RunWorkerOptions> = {}) {
  return startRunWorker({
    redis,
    store,
    workflows,
    runner: () => ({ client: new SteeredClient(), contextManager: new ContextManager({ budgetTokens: 8192 }) }),
    ...extra,
  });
}

/**
 * When BullMQ enqueued a job, last started it and finished it, by the worker's clock: a
 * caller's result() may learn of the end up to a poll later, so timings are checked on these.
 */
export async function jobTimes(redis: string, workflow: string, runId: string): Promise<{ enqueuedAt: number; startedAt: number; finishedAt: number }> {
  const queue = new Queue(runQueueName(workflow), { connection: redisOptions(redis) });
  try {
    const job = await queue.getJob(runId);
    if (!job?.finishedOn) throw new Error(`job ${runId} of ${workflow} has not finished`);
    return { enqueuedAt: job.timestamp, startedAt: job.processedOn ?? job.timestamp, finishedAt: job.finishedOn };
  } finally {
    await queue.close();
  }
}
