/**
 * One worker process of the chaos harness: a run worker for the chaos workflow on a shared store
 * with a short lease, noting every tool call, durable outcome and lease in the effects file.
 * Prints "ready" once its BullMQ workers are connected; SIGTERM closes it.
 *
 * Usage: chaos-worker.ts <redisUrl> <file|sql|postgres> <storeLocation> <effectsFile> [<model think ms>]
 */
import { startRunWorker } from "../../src/queue/run-worker.js";
import { CHAOS_TIMING, chaosRunnerOptions, createChaosWorkflow, openChaosStore, type ChaosStoreKind } from "./chaos-workflow.js";
import { effectWriter, machineMs, recordingOutcomes } from "./effects.js";

const [redis, kind, location, effectsFile, think = "0"] = process.argv.slice(2);
const thinkMs = Number(think);
if (!redis || !location || !effectsFile || (kind !== "file" && kind !== "sql" && kind !== "postgres") || !(Number.isInteger(thinkMs) && thinkMs >= 0)) {
  console.error("usage: chaos-worker.ts <redisUrl> <file|sql|postgres> <storeLocation> <effectsFile> [<model think ms>]");
  process.exit(2);
}

const effect = effectWriter(effectsFile);
// Every line ends with the machine's monotonic clock: the harness measures how soon runs move on
// (this process's wall clock may be skewed on purpose).
const note = (line: string) => effect(`${line} ${machineMs()}`);
const store = recordingOutcomes(openChaosStore(kind as ChaosStoreKind, location, CHAOS_TIMING.leaseMs), effect, { leases: true, stamp: () => String(machineMs()) });

const worker = startRunWorker({
  redis,
  store,
  workflows: [createChaosWorkflow(note)],
  runner: () => chaosRunnerOptions(thinkMs),
  concurrency: CHAOS_TIMING.concurrency,
  lockDurationMs: CHAOS_TIMING.lockDurationMs,
  sessionBackstopMs: CHAOS_TIMING.sessionBackstopMs,
});
await Promise.all(worker.workers.map((w) => w.waitUntilReady()));
// With the wall clock: the harness tells from it how far this process's clock is skewed.
console.log(`ready ${Date.now()}`);

process.once("SIGTERM", () => {
  void worker.close().finally(() => process.exit(0));
});
