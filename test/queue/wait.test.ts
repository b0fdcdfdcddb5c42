/**
 * waitForJob against a real redis-server: a job requeued between the look's two reads (its state,
 * then the job) is not answered with the outcome the requeue erased. `resumeRun` does exactly
 * that to a run parked waiting for a person: the waiter read "completed", the requeue cleared
 * the job's return value, and the caller got `null` for a result.
 */
import { Queue, QueueEvents, Worker } from "bullmq";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { redisOptions } from "../../src/queue/redis.js";
import { waitForJob } from "../../src/queue/wait.js";

let redis: TestRedis;
let queue: Queue;
let events: QueueEvents;

beforeAll(async () => {
  redis = await startRedis();
  queue = new Queue("wait-race", { connection: redisOptions(redis.url) });
  events = new QueueEvents("wait-race", { connection: redisOptions(redis.url) });
  await events.waitUntilReady();
});

afterAll(async () => {
  await events?.close();
  await queue?.close();
  await redis?.stop();
});

/** Runs the queue's jobs until `count` have completed, each answering the next of `answers`. */
async function complete(answers: unknown[]): Promise<void> {
  let done = 0;
  const all = answers.length;
  const finished = new Promise<void>((resolve) => {
    const worker = new Worker("wait-race", async () => answers.shift(), { connection: redisOptions(redis.url) });
    worker.on("completed", () => {
      if (++done === all) void worker.close().then(resolve);
    });
  });
  await finished;
}

it("a job requeued between the state read and the job read waits for its next outcome", async () => {
  const job = await queue.add("run", {}, { jobId: "parked-then-resumed" });
  await complete([{ waiting: "parked" }]);
  expect(await queue.getJobState(job.id!)).toBe("completed");

  // The look reads "completed"; before it reads the job, the job is requeued (as resumeRun does).
  const realState = queue.getJobState.bind(queue);
  let requeued = false;
  queue.getJobState = async (id: string) => {
    const state = await realState(id);
    if (!requeued && state === "completed") {
      requeued = true;
      await job.retry("completed");
    }
    return state;
  };
  try {
    const outcome = waitForJob(queue, events, job.id!, { pollMs: 50 });
    await expect.poll(() => requeued).toBe(true);
    await complete([{ result: "after the decision" }]);
    expect(await outcome).toEqual({ result: "after the decision" });
  } finally {
    queue.getJobState = realState;
  }
});
