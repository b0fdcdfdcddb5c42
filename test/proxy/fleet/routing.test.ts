/**
 * Which backend gets a request: the least busy one serving the caller's model (ties round-robin),
 * never more than its maxConcurrent at once; beyond that a bounded FIFO wait (with SSE keep-alives
 * for streams) and then 429 + Retry-After. Names and aliases map to each backend's own model
 * name, and GET /v1/models lists them all.
 */
import { describe, expect, it } from "vitest";
import { answer, ask, chat, contentOf, fakeBackend, fleetConfig, fleetProxy, hold, until } from "./support/fleet-rig.js";

describe("least-busy routing", () => {
  it("ten concurrent slow requests split five and five", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const release = hold(a, b);
    const { url } = await fleetProxy(fleetConfig([a, b]));
    const pending = Array.from({ length: 10 }, (_, i) => chat(url, { messages: ask(`r${i}`) }));
    await until(() => a.chats.length + b.chats.length === 10);
    expect([a.active, b.active]).toEqual([5, 5]);
    release();
    const contents = await Promise.all(pending.map(async (p) => contentOf(await p)));
    expect(contents.filter((c) => c === "hello from a")).toHaveLength(5);
  });

  it("a busy backend gets nothing until the other is as busy; one at a time goes round-robin", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const { url } = await fleetProxy(fleetConfig([a, b]));
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push(await contentOf(await chat(url, { messages: ask(`seq${i}`) })));
    expect(new Set([order[0], order[1]]).size).toBe(2); // alternating, whichever comes first
    expect(order[2]).toBe(order[0]);
    expect(order[3]).toBe(order[1]);

    const release = hold(a, b);
    const first = [chat(url, { messages: ask("x0") }), chat(url, { messages: ask("x1") }), chat(url, { messages: ask("x2") })];
    await until(() => a.active + b.active === 3);
    const busier = a.active === 2 ? a : b;
    const idler = busier === a ? b : a;
    const next = chat(url, { messages: ask("x3") });
    await until(() => idler.active === 2);
    expect(busier.active).toBe(2);
    release();
    await Promise.all([...first, next]);
  });

  it("an alias reaches the backends under their own model names; an unknown model is a 404", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const { url } = await fleetProxy(fleetConfig([a, b]));
    expect((await chat(url, { model: "alias-m", messages: ask("1") })).status).toBe(200);
    expect((await chat(url, { model: "m", messages: ask("2") })).status).toBe(200);
    expect([...a.chats, ...b.chats].map((r) => r.body.model).sort()).toEqual(["a-model", "b-model"]);
    const unknown = await chat(url, { model: "gpt-4o", messages: ask("3") });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/"gpt-4o" is not served here/);
  });

  it("GET /v1/models lists every configured name and alias, in both shapes", async () => {
    const [a, b] = [await fakeBackend("a"), await fakeBackend("b")];
    const config = fleetConfig([a, b]);
    config.models.solo = { backends: ["b"], aliases: ["b-default"] };
    const { url } = await fleetProxy(config);
    const openai = (await (await fetch(`${url}/v1/models`)).json()) as { object: string; data: { id: string; object: string }[] };
    expect(openai.data.map((m) => m.id)).toEqual(["m", "alias-m", "solo", "b-default"]);
    expect(openai.data[0]).toMatchObject({ object: "model", owned_by: "forge-ts" });
    const anthropic = (await (await fetch(`${url}/v1/models`, { headers: { "anthropic-version": "2023-06-01" } })).json()) as { data: { type: string; id: string }[]; first_id: string };
    expect(anthropic.data.map((m) => m.id)).toEqual(["m", "alias-m", "solo", "b-default"]);
    expect(anthropic.first_id).toBe("m");
    expect(a.probes + b.probes).toBe(0); // the list is the config's, not the backends'
  });
});

describe("per-backend limit and the wait queue", () => {
  it("maxConcurrent holds; one waits; past maxWaiting a 429 with Retry-After in both dialects", async () => {
    const gpu = await fakeBackend("gpu");
    const release = hold(gpu);
    const { url, proxy } = await fleetProxy(fleetConfig([gpu], { maxConcurrent: 1, queue: { maxWaiting: 1, maxWaitMs: 60_000 } }));
    const first = chat(url, { messages: ask("1") });
    await until(() => gpu.active === 1);
    const second = chat(url, { messages: ask("2") });
    await until(() => proxy.stats().waiting === 1);
    const refused = await chat(url, { messages: ask("3") });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: "rate_limit_error", message: expect.stringMatching(/wait queue is full/) });
    const anthropic = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", max_tokens: 8, messages: ask("4") }) });
    expect(anthropic.status).toBe(429);
    expect(anthropic.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(gpu.chats).toHaveLength(1);
    release();
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
    expect(gpu.maxActive).toBe(1);
  });

  it("a wait longer than maxWaitMs is a 429 too; a stream refused before its headers gets the real status", async () => {
    const gpu = await fakeBackend("gpu");
    const release = hold(gpu);
    const { url } = await fleetProxy(fleetConfig([gpu], { maxConcurrent: 1, queue: { maxWaiting: 4, maxWaitMs: 150 } }), { keepAliveMs: 60_000 });
    const first = chat(url, { messages: ask("1") });
    await until(() => gpu.active === 1);
    const started = performance.now();
    const [plain, streamed] = await Promise.all([chat(url, { messages: ask("2") }), chat(url, { messages: ask("3"), stream: true })]);
    // A lower bound: a slow machine only makes the wait longer.
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    for (const res of [plain, streamed]) {
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/stayed busy/);
    }
    release();
    expect((await first).status).toBe(200);
  });

  it("a stream waiting in the queue gets keep-alive pings, then its answer", async () => {
    const gpu = await fakeBackend("gpu", answer({ pieceMs: 2 }));
    const release = hold(gpu);
    const { url } = await fleetProxy(fleetConfig([gpu], { maxConcurrent: 1, queue: { maxWaiting: 4, maxWaitMs: 10_000 } }), { keepAliveMs: 20 });
    const first = chat(url, { messages: ask("1") });
    await until(() => gpu.active === 1);
    const res = await chat(url, { messages: ask("2"), stream: true });
    expect(res.status).toBe(200); // headers went out with the first keep-alive
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while ((text.match(/^: ping$/gm) ?? []).length < 3) text += (await reader.read()).value ?? "";
    expect(gpu.chats).toHaveLength(1); // still queued: the pings came from the proxy
    release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
    expect(text.indexOf(": ping")).toBeLessThan(text.indexOf('"content":"hell"'));
    expect(text.indexOf('"content":"hell"')).toBeGreaterThan(0);
    expect(text).toContain("data: [DONE]");
    expect((await first).status).toBe(200);
  });

  it("a stream whose wait runs out after its headers gets a rate_limit_error event", async () => {
    const gpu = await fakeBackend("gpu");
    const release = hold(gpu);
    // Pings every 20 ms within a 3 s wait: the wait's timer starts before the headers go out, so
    // a wait of a few pings' length could run out first on a loaded machine (seen at 120 ms).
    const { url } = await fleetProxy(fleetConfig([gpu], { maxConcurrent: 1, queue: { maxWaiting: 4, maxWaitMs: 3_000 } }), { keepAliveMs: 20 });
    const first = chat(url, { messages: ask("1") });
    await until(() => gpu.active === 1);
    const res = await chat(url, { messages: ask("2"), stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(": ping");
    expect(text).toMatch(/data: \{"error":\{"type":"rate_limit_error","message":"Every backend serving \\"m\\" stayed busy/);
    release();
    await first;
  });

  it("a caller that leaves the queue frees its place", async () => {
    const gpu = await fakeBackend("gpu");
    const release = hold(gpu);
    const { url, proxy } = await fleetProxy(fleetConfig([gpu], { maxConcurrent: 1, queue: { maxWaiting: 1, maxWaitMs: 10_000 } }));
    const first = chat(url, { messages: ask("1") });
    await until(() => gpu.active === 1);
    const caller = new AbortController();
    const leaving = fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: ask("2") }), signal: caller.signal });
    await until(() => proxy.stats().waiting === 1);
    caller.abort();
    await expect(leaving).rejects.toThrow();
    await until(() => proxy.stats().inFlight === 1 && proxy.stats().waiting === 0);
    const third = chat(url, { messages: ask("3") }); // the queue has room again
    await until(() => proxy.stats().waiting === 1);
    release();
    expect([(await first).status, (await third).status]).toEqual([200, 200]);
    expect(gpu.chats.map((r) => r.body.messages.at(-1).content)).toEqual(["1", "3"]);
  });
});

describe("a backend's own settings", () => {
  it("recommendedSampling sends its model card's sampling values with each request", async () => {
    const a = await fakeBackend("a");
    const config = fleetConfig([a]);
    config.backends.a = { ...config.backends.a!, model: "qwen3:8b", recommendedSampling: true };
    const { url } = await fleetProxy(config);
    expect((await chat(url, { messages: ask("1") })).status).toBe(200);
    expect(a.chats[0]!.body.options).toMatchObject({ temperature: 0.6, top_p: 0.95, top_k: 20, min_p: 0 });
  });
});
