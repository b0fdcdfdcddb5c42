/**
 * A queued run continues its producer's trace across processes: the producer enqueues inside
 * its own span, a worker in a child process runs the job and exports its spans over OTLP/HTTP
 * (JSON) to a loopback receiver here; the worker's run span has the producer's trace id and the
 * producer's span as its parent.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { createRunQueue } from "../../src/queue/run-queue.js";
import { workflow as notes } from "../fixtures/queue-workflow.js";
import { until } from "../support/until.js";
import { installTracing, resetTracing } from "../support/otel.js";
import { builtModule } from "../support/cli.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}

let redis: TestRedis;
let receiver: Server;
let worker: ChildProcess | undefined;
const received: OtlpSpan[] = [];

beforeAll(async () => {
  redis = await startRedis();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const data = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const r of data.resourceSpans) for (const s of r.scopeSpans) received.push(...s.spans);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
}, 300_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill("SIGKILL");
  await redis?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});
afterEach(() => resetTracing());

function startWorker(): Promise<ChildProcess> {
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  const child = spawn(process.execPath, [builtModule("test/fixtures/traced-worker.ts"), redis.url], { env: { ...process.env, OTLP_URL: url } });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready")) resolve(child);
    });
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`worker exited ${code}: ${out}`)));
  });
}

describe("queued run tracing", () => {
  it("the worker's run span (another process, OTLP/HTTP) continues the producer's trace", async () => {
    worker = await startWorker();
    const t = installTracing();
    const producer = trace.getTracer("producer").startSpan("enqueue notes");
    const queue = createRunQueue({ redis: redis.url });
    try {
      const run = await queue.enqueueRun({ workflow: notes, text: "remember milk", traceContext: trace.setSpan(ROOT_CONTEXT, producer) });
      await run.result(60_000);
    } finally {
      producer.end();
      await queue.close();
    }
    const { traceId, spanId } = t.one("enqueue notes").spanContext();
    const runSpan = await until(() => received.find((s) => s.name === `invoke_agent ${notes.name}`), 60_000);
    expect(runSpan.traceId).toBe(traceId);
    expect(runSpan.parentSpanId).toBe(spanId);
    const chats = await until(() => {
      const found = received.filter((s) => s.name.startsWith("chat ") && s.parentSpanId === runSpan.spanId);
      return found.length > 0 ? found : undefined;
    }, 300_000);
    expect(chats.every((s) => s.traceId === traceId)).toBe(true);
    // Exported in batches: the tool spans may come in a later one.
    await until(() => received.some((s) => s.name.startsWith("execute_tool ") && s.parentSpanId === runSpan.spanId), 60_000);
  }, 300_000);
});
