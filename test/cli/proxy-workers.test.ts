/**
 * `forge-ts proxy --workers <n>` as a process (issue 46): n workers on one port, /forge/stats,
 * /metrics and /health for all of them, a worker killed with kill -9 replaced, a crash loop
 * backed off and ended, SIGTERM draining every stream in flight before the exit (0), and the
 * single process draining the same way (ProxyServer.drain, in process too). The backend holds a
 * stream open until the test releases it: waits are on events and conditions, never sleeps.
 */
import { execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildClient } from "../../src/cli-kit/backends.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { cliArgs } from "../support/cli.js";
import { startProxyProcess, type ProxyProcess } from "../support/proxy-process.js";
import { until } from "../support/until.js";

const run = promisify(execFile);
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_"))), NO_COLOR: "1" };
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const COMPLETION = JSON.stringify({ id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

/** A llama-server wire; a streamed request whose message says "hold" stays open until released. */
let backendUrl = "";
const held: ServerResponse[] = [];
const backend = createServer((req, res) => {
  let body = "";
  req.on("data", (d: Buffer) => (body += d.toString()));
  req.on("end", () => {
    if (req.url?.endsWith("/props")) return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ default_generation_settings: { n_ctx: 32768 } }));
    if (req.url?.endsWith("/models")) return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [{ id: "m" }] }));
    const parsed = JSON.parse(body) as { stream?: boolean };
    if (!parsed.stream) return res.writeHead(200, { "content-type": "application/json" }).end(COMPLETION);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk({ role: "assistant", content: "first " }));
    held.push(res);
  });
});
const release = () => {
  for (const res of held.splice(0)) res.end(chunk({ content: "last" }) + chunk({}, "stop") + "data: [DONE]\n\n");
};
beforeAll(async () => {
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
});
afterAll(async () => {
  release();
  backend.closeAllConnections();
  await new Promise((resolve) => backend.close(resolve));
});

const agent = new Agent({ connections: 64 });
afterAll(() => agent.close());

async function getJson(url: string): Promise<Record<string, unknown>> {
  const res = await request(url, { dispatcher: agent });
  return (await res.body.json()) as Record<string, unknown>;
}
async function chat(url: string): Promise<number> {
  const res = await request(`${url}/v1/chat/completions`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) });
  await res.body.text();
  return res.statusCode;
}
/** A held stream: resolves its first delta's arrival, then the whole text once the backend is released. */
async function heldStream(url: string): Promise<{ whole: Promise<string> }> {
  const res = await request(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hold" }] }) });
  let text = "";
  let first!: () => void;
  const arrived = new Promise<void>((resolve) => (first = resolve));
  const whole = (async () => {
    for await (const c of res.body) {
      text += c.toString();
      if (text.includes("first")) first();
    }
    return text;
  })();
  await arrived;
  return { whole };
}

type Stats = { requests: number; workers: { live: number; answered: number; each: { pid: number; requests: number }[] } };

async function startWorkers(count: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<{ proxy: ProxyProcess; url: string }> {
  const proxy = await startProxyProcess(["--backend", "llamaserver", "--model", "m", "--base-url", backendUrl, "--port", "0", "--workers", String(count)], { ...env, ...extraEnv }, (out) => out.includes("Codex:") && out.includes("workers:"), children);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(proxy.stdout())![1]!;
  // Every worker serving: the primary counts those that said they listen.
  await until(async () => ((await getJson(`${url}/forge/stats`)) as unknown as Stats).workers.answered === count);
  return { proxy, url };
}

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));

describe("forge-ts proxy --workers", () => {
  it("two workers share the port; /forge/stats and /metrics count for both; a worker killed with -9 is replaced", async () => {
    const { proxy, url } = await startWorkers(2);
    expect(proxy.stdout().match(/listening on/g)).toHaveLength(1); // the start-up lines once, not per worker
    const codes = await Promise.all(Array.from({ length: 20 }, () => chat(url)));
    expect(codes.every((c) => c === 200)).toBe(true);
    const stats = (await getJson(`${url}/forge/stats`)) as unknown as Stats;
    expect(stats.requests).toBe(20);
    expect(stats.workers.each).toHaveLength(2);
    expect(stats.workers.each.every((w) => w.requests > 0)).toBe(true);
    const metrics = await (await request(`${url}/metrics`, { dispatcher: agent })).body.text();
    const counted = [...metrics.matchAll(/^forge_proxy_requests_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(counted).toBe(20);
    // A process's limit is each worker's, not a sum (the workers inherit this process's limit, as Node raises it).
    if (process.platform === "linux") {
      const limit = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))![1];
      expect(metrics).toMatch(new RegExp(`^forge_process_max_fds ${limit}$`, "m"));
    }
    const health = await until(async () => {
      const h = await getJson(`${url}/health`);
      return h.workers === 2 ? h : undefined;
    });
    expect(health).toMatchObject({ status: "ok", workers: 2 });

    const victim = stats.workers.each[0]!.pid;
    process.kill(victim, "SIGKILL");
    await until(() => proxy.stderr().includes(`worker ${victim} ended (SIGKILL); starting another`));
    // A replacement still starting is not asked: the scrape answers for the serving ones meanwhile.
    expect((await request(`${url}/metrics`, { dispatcher: agent })).statusCode).toBe(200);
    const after = await until(async () => {
      const s = (await getJson(`${url}/forge/stats`)) as unknown as Stats;
      return s.workers.answered === 2 && !s.workers.each.some((w) => w.pid === victim) ? s : undefined;
    });
    expect(after.workers.each.map((w) => w.pid)).not.toContain(victim);
    expect(await Promise.all(Array.from({ length: 6 }, () => chat(url)))).toEqual(Array(6).fill(200));
    proxy.child.kill("SIGTERM");
    expect(await exitOf(proxy.child)).toBe(0);
  }, 180_000);

  it("SIGTERM drains: a stream in flight finishes whole, new connections are refused, exit 0", async () => {
    const { proxy, url } = await startWorkers(2);
    const stream = await heldStream(url);
    proxy.child.kill("SIGTERM");
    await until(() => proxy.stdout().includes("SIGTERM, draining 2 workers"));
    // Refused once every worker has stopped listening; the held stream is still open.
    await until(() => chat(url).then(() => false, () => true));
    expect(proxy.child.exitCode).toBe(null);
    release();
    const text = await stream.whole;
    expect(text).toContain("last");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(await exitOf(proxy.child)).toBe(0);
  }, 180_000);

  it("one process drains the same way: the stream in flight finishes whole, exit 0", async () => {
    const proxy = await startProxyProcess(["--backend", "llamaserver", "--model", "m", "--base-url", backendUrl, "--port", "0"], env, (out) => out.includes("Codex:"), children);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(proxy.stdout())![1]!;
    const stream = await heldStream(url);
    proxy.child.kill("SIGTERM");
    await until(() => proxy.stdout().includes("SIGTERM, draining"));
    release();
    const text = await stream.whole;
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(await exitOf(proxy.child)).toBe(0);
  }, 120_000);

  it("replacements that die as soon as they listen are re-forked after a doubling wait; five in a row end the proxy (exit 1)", async () => {
    // Fault injection: a worker forked as a replacement (cluster id above 2) exits once it has said it listens.
    const dir = mkdtempSync(path.join(tmpdir(), "forge-crash-loop-"));
    const hook = path.join(dir, "replacements-die.mjs");
    writeFileSync(
      hook,
      `import cluster from "node:cluster";
if (cluster.isWorker && cluster.worker.id > 2) {
  const send = process.send.bind(process);
  process.send = (message, ...rest) => (message?.forge === "listening" ? send(message, () => process.exit(3)) : send(message, ...rest));
}
`,
    );
    try {
      const { proxy, url } = await startWorkers(2, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${pathToFileURL(hook).href}`.trim() });
      const stats = (await getJson(`${url}/forge/stats`)) as unknown as Stats;
      process.kill(stats.workers.each[0]!.pid, "SIGKILL");
      const code = await exitOf(proxy.child);
      const stderr = proxy.stderr();
      expect(code, stderr).toBe(1);
      expect(stderr).toContain("ended (exit code 3); 5 workers in a row died within 1000 ms of starting: giving up");
      // Each quick death waits twice as long as the one before (the kill -9 itself may or may not count as quick).
      const waits = [...stderr.matchAll(/ended \(exit code 3\); starting another in (\d+) ms/g)].map((m) => Number(m[1]));
      expect(waits.length, stderr).toBeGreaterThanOrEqual(3);
      expect(waits, stderr).toEqual(waits.map((_, i) => waits[0]! * 2 ** i));
      expect(stderr).toContain(`worker ${stats.workers.each[0]!.pid} ended (SIGKILL); starting another`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("a bad flag with --workers is one line and exit 2 before any worker starts; a port taken is exit 1", async () => {
    const bad = (await run(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "llamaserver", "--model", "m", "--mode", "nonsense", "--workers", "2"), { env }).catch((e: unknown) => e)) as { code: number; stderr: string; stdout: string };
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stdout).not.toContain("listening");
    const taken = String((backend.address() as AddressInfo).port);
    const busy = (await run(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "llamaserver", "--model", "m", "--base-url", "http://127.0.0.1:9", "--port", taken, "--workers", "2"), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`cannot listen on 127.0.0.1:${taken}`);
  }, 120_000);

  it.each([["0"], ["x"], ["2000"]])("--workers %s exits 2 naming the flag, forking nothing", async (value) => {
    const error = (await run(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "llamaserver", "--model", "m", "--workers", value), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr).toContain("--workers");
  }, 60_000);
});

describe("ProxyServer.drain (in process)", () => {
  const client = () => buildClient({ backend: "llamaserver", model: "m", baseUrl: backendUrl, mode: "native", apiKeyFlag: "--backend-api-key" });
  const completion = (stream = false) => new Request("http://127.0.0.1/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "hi" }] }) });

  it("answers /health 503 draining and new requests 503, refuses connections, and lets the stream in flight finish", async () => {
    const proxy = createProxy({ client: client(), model: "m" });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    const stream = await heldStream(url);
    const drained = proxy.drain(60_000);
    const health = await proxy.fetch(new Request("http://127.0.0.1/health"));
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: "draining" });
    expect((await proxy.fetch(completion())).status).toBe(503);
    const fresh = new Agent();
    await until(() => request(`${url}/health`, { dispatcher: fresh }).then(() => false, (error: { code?: string }) => error.code === "ECONNREFUSED"));
    await fresh.close();
    release();
    const text = await stream.whole;
    expect(text).toContain("last");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    await drained;
  });

  it("past its deadline, cuts what is left as close() does", async () => {
    const proxy = createProxy({ client: client(), model: "m" });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    const stream = await heldStream(url);
    await proxy.drain(1);
    const text = await stream.whole;
    expect(text).not.toContain("last");
    expect(text).toContain("error");
    release();
  });
});
