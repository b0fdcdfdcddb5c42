/**
 * The issue's "done when": two backends under load (40 concurrent requests: plain and streamed,
 * with and without tools, more than the backends' slots so some queue), one killed mid-load
 * (listener closed, every socket destroyed). Every request whose stream had not started on the
 * killed backend succeeds; the ones that had get the API's error event; /health names the dead one.
 */
import { describe, expect, it } from "vitest";
import { WEATHER_SCHEMA } from "../support/harness.js";
import { chat, fakeBackend, fleetConfig, fleetProxy, hold, marker, reply, until, type Behaviour } from "./support/fleet-rig.js";

const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_SCHEMA } }];

/**
 * Tool requests get a native call, the others a text answer in a few pieces; each waits on its
 * backend's gate (`hold`), a text stream after its first piece. Until the kill, a holds every
 * answer and b every answer once one of its own streams is under way (before that it answers
 * whole requests, so that it always gets one): the load is still on at the kill however slow
 * the machine, with no timing to count on. The delays only make the answers after it uneven.
 */
const model: Behaviour = (req, res, backend) => {
  const n = Number(marker(req).replace(/\D/g, "")) || 0;
  const timing = { delayMs: (n % 10) * 10, pieceMs: 10 };
  const tools = Array.isArray(req.body.tools) && req.body.tools.length > 0;
  const textStream = req.body.stream === true && !tools;
  const gate = textStream || backend.name === "a" || backend.streamed.size > 0 ? backend.gate : Promise.resolve();
  if (tools) return reply(req, res, backend, { toolCalls: [{ name: "get_weather", args: { city: `Oslo-${n}` } }] }, { ...timing, gate });
  return reply(req, res, backend, { content: `answer ${n} from ${backend.name}, told in a few pieces` }, { ...timing, gate, gateAfterPieces: 1 });
};

type Kind = "plain" | "stream" | "plain+tools" | "stream+tools";
const KINDS: Kind[] = ["plain", "stream", "plain+tools", "stream+tools"];

/** The caller's view of one finished request: whether it succeeded, and its text or call. */
async function outcome(kind: Kind, res: Response): Promise<{ ok: boolean; said: string }> {
  if (!kind.startsWith("stream")) {
    if (res.status !== 200) return { ok: false, said: await res.text() };
    const message = ((await res.json()) as { choices: { message: { content: string | null; tool_calls?: { function: { arguments: string } }[] } }[] }).choices[0]!.message;
    return { ok: true, said: message.tool_calls?.[0]?.function.arguments ?? message.content ?? "" };
  }
  const text = await res.text();
  if (res.status !== 200 || /^data: \{"error"/m.test(text) || !text.includes("data: [DONE]")) return { ok: false, said: text };
  const deltas = text
    .split("\n")
    .filter((l) => l.startsWith("data: {"))
    .map((l) => (JSON.parse(l.slice(6)) as { choices: { delta: { content?: string; tool_calls?: { function: { arguments?: string } }[] } }[] }).choices[0]?.delta);
  return { ok: true, said: deltas.map((d) => d?.content ?? d?.tool_calls?.[0]?.function.arguments ?? "").join("") };
}

describe("killing one of two backends under load", () => {
  it("loses no request that had not started streaming, and /health says which backend is down", async () => {
    const [a, b] = [await fakeBackend("a", model), await fakeBackend("b", model)];
    const release = hold(a, b);
    // Waiting requests wait out the hold and then a's turns: the queue's deadline is not under test.
    const { url, proxy } = await fleetProxy(fleetConfig([a, b], { maxConcurrent: 8, queue: { maxWaiting: 64, maxWaitMs: 120_000 }, health: { intervalMs: 30, timeoutMs: 10_000 } }), {
      keepAliveMs: 25,
    });
    const requests = Array.from({ length: 40 }, (_, i) => {
      const kind = KINDS[i % 4]!;
      const body = { messages: [{ role: "user", content: `req-${i}` }], stream: kind.startsWith("stream"), ...(kind.endsWith("tools") ? { tools: TOOLS } : {}) };
      return { i, kind, response: chat(url, body) };
    });

    // Mid-load: both backends full (the rest queued), b holding a stream it had started and
    // requests it had not.
    await until(() => a.active === 8 && b.active === 8 && b.streamed.size >= 1 && b.streamed.size < b.active, 60_000);
    const inFlightOnB = b.active;
    const inFlight = proxy.stats().inFlight;
    await b.kill();
    const startedOnB = new Set(b.streamed);
    release();

    const results = await Promise.all(requests.map(async (r) => ({ ...r, ...(await outcome(r.kind, await r.response)) })));
    const lost = results.filter((r) => !r.ok && !startedOnB.has(`req-${r.i}`));
    expect(lost.map((r) => `${r.i} ${r.kind}: ${r.said.slice(0, 300)}`)).toEqual([]);
    for (const r of results.filter((x) => x.ok)) {
      expect(r.said).toMatch(r.kind.endsWith("tools") ? new RegExp(`"city":"Oslo-${r.i}"`) : new RegExp(`^answer ${r.i} from [ab], told in a few pieces$`));
    }
    // The ones that failed had streamed part of an answer from b: it cannot be taken back.
    for (const r of results.filter((x) => !x.ok)) {
      expect(r.kind).toBe("stream");
      expect(r.said).toMatch(/from b|answ/);
      expect(r.said).toMatch(/^data: \{"error":\{"type":"api_error"/m);
    }
    expect(inFlight).toBeGreaterThanOrEqual(16); // the load was on ...
    expect(inFlightOnB).toBe(8); // ... the kill did hit requests in flight ...
    expect(a.chats.length + b.chats.length).toBeGreaterThan(40); // ... and they were sent again, to a
    expect(results.filter((r) => r.ok).length).toBeGreaterThanOrEqual(40 - startedOnB.size);

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(503);
    const body = (await health.json()) as { status: string; backends: { name: string; up: boolean; lastError?: string }[] };
    expect(body.status).toBe("degraded");
    expect(body.backends.map((x) => [x.name, x.up])).toEqual([["a", true], ["b", false]]);
    expect(body.backends[1]!.lastError).toBeTruthy();
    expect(a.maxActive).toBeLessThanOrEqual(8);
    expect(proxy.stats().inFlight).toBe(0);
  }, 120_000); // 40 requests through one backend after the kill: seconds on a loaded 2-core machine
});
