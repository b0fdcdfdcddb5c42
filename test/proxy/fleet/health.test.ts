/**
 * GET /health asks the backends (cached for `intervalMs`): 200 when all answer, 503 naming the
 * ones that do not — for the single-backend proxy too, which used to say "ok" with its backend
 * down. A backend that comes back is found by the next probe, and the pool sends to it again.
 */
import { describe, expect, it } from "vitest";
import { OllamaClient } from "../../../src/clients/ollama.js";
import { createProxy } from "../../../src/proxy/create-proxy.js";
import { ask, chat, contentOf, fakeBackend, fleetConfig, fleetProxy, until } from "./support/fleet-rig.js";

interface Health {
  status: string;
  backends: { name: string; up: boolean; inFlight: number; maxConcurrent: number | null; model?: string; lastError?: string }[];
  backend?: string;
  model?: string;
}

const health = async (url: string) => {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: (await res.json()) as Health };
};

/** /health once it says `status`: a cached answer stands until it is `intervalMs` old, then the next call probes. */
const healthOnce = (url: string, status: string) => until(async () => ((h) => (h.body.status === status ? h : undefined))(await health(url)));

describe("the single-backend proxy", () => {
  it("answers 503 while its backend is down and 200 once it is back", async () => {
    const gpu = await fakeBackend("gpu");
    await gpu.kill();
    const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b", baseUrl: gpu.url, think: false }) });
    const { url } = await proxy.listen({ port: 0 });
    try {
      const down = await health(url);
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ status: "down", backend: "ollama", model: "qwen3:8b", backends: [{ name: "backend", up: false, lastError: expect.stringMatching(/ECONNREFUSED|No usable HTTP answer/) }] });
      await gpu.revive();
      expect((await chat(url, { messages: ask("hi") })).status).toBe(200); // a request that succeeds is news too
      const up = await health(url);
      expect(up.status).toBe(200);
      expect(up.body).toMatchObject({ status: "ok", backends: [{ name: "backend", up: true, inFlight: 0, maxConcurrent: null }] });
      expect(up.body.backends[0]!.lastError).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });
});

describe("a fleet", () => {
  it("names the backend that is down (503 degraded), says down when all are, and recovers", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const { url } = await fleetProxy(fleetConfig([a, b], { maxConcurrent: 3, health: { intervalMs: 40, timeoutMs: 5_000 } }));
    expect(await health(url)).toMatchObject({ status: 200, body: { status: "ok", backends: [{ name: "a", up: true, model: "a-model", maxConcurrent: 3 }, { name: "b", up: true }] } });
    await b.kill();
    const degraded = await healthOnce(url, "degraded");
    expect(degraded.status).toBe(503);
    expect(degraded.body.backends.map((x) => [x.name, x.up])).toEqual([["a", true], ["b", false]]);
    expect(degraded.body.backends[1]!.lastError).toMatch(/ECONNREFUSED|No usable HTTP answer/);
    await a.kill();
    expect((await healthOnce(url, "down")).status).toBe(503);
    await Promise.all([a.revive(), b.revive()]);
    expect((await healthOnce(url, "ok")).status).toBe(200);
  });

  it("probes each backend at most once per interval, however often /health is asked", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const { url } = await fleetProxy(fleetConfig([a, b], { health: { intervalMs: 60_000, timeoutMs: 500 } }));
    await Promise.all(Array.from({ length: 10 }, () => health(url)));
    for (let i = 0; i < 5; i++) await health(url);
    expect([a.probes, b.probes]).toEqual([1, 1]);
  });

  it("reports each backend's load", async () => {
    const a = await fakeBackend("a");
    let release!: () => void;
    a.gate = new Promise((r) => (release = r));
    const { url } = await fleetProxy(fleetConfig([a], { maxConcurrent: 2 }));
    const pending = [chat(url, { messages: ask("1") }), chat(url, { messages: ask("2") })];
    await until(() => a.active === 2);
    expect((await health(url)).body.backends[0]).toMatchObject({ inFlight: 2, maxConcurrent: 2 });
    release();
    await Promise.all(pending);
  });

  it("a backend marked down by a failed request is probed again once its state is stale, then used again", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const { url } = await fleetProxy(fleetConfig([a, b], { health: { intervalMs: 60, timeoutMs: 5_000 } }));
    await b.kill();
    for (let i = 0; i < 4; i++) expect(await contentOf(await chat(url, { messages: ask(`${i}`) }))).toBe("hello from a");
    await b.revive();
    // No /health call: skipping b after the interval starts a probe, which finds it back.
    await until(async () => {
      await chat(url, { messages: ask("again") });
      return b.chats.length > 0;
    });
    expect(b.chats.length).toBeGreaterThan(0);
    expect(b.probes).toBeGreaterThanOrEqual(1);
  });
});
