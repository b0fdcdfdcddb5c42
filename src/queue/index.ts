/** `forge-ts/queue`: runs on BullMQ + Redis (a separate entry: the main one never loads BullMQ). */
export {
  createRunQueue,
  runQueueName,
  type CancelOutcome,
  type EnqueuedRun,
  type EnqueueRunOptions,
  type RunJobData,
  type RunJobInfo,
  type RunJobResult,
  type RunProgress,
  type RunQueue,
  type RunQueueOptions,
} from "./run-queue.js";
export { startRunWorker, type RunWorkerOptions } from "./run-worker.js";
export { jobIdOf, redisOptions } from "./redis.js";
