/**
 * The visualizer acts, over HTTP: POST /api/runs/:runId/decisions records a person's decision
 * on a waiting run (statuses for every way it can go wrong), the run list carries the waiting
 * run's requests, and the one guard in front of /api (loopback, or the token from elsewhere).
 */
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { visualizerInspector, type VisualizerInspector } from "../../visualizer/inspector.js";
import type { RunSummary } from "../../visualizer/protocol.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { parkedRun, refundsWorkflow } from "./support/waiting-run.js";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";

const open: Visualizer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
});

async function serve(options: Parameters<typeof createVisualizer>[0], host = "127.0.0.1") {
  const viz = createVisualizer(options);
  open.push(viz);
  const listening = await viz.listen({ port: 0, host });
  return { viz, ...listening };
}

const post = (url: string, body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) =>
  fetch(url, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as { error?: { code: string; message: string; problem?: string; expiresInMs?: number } } & Record<string, unknown> });

/** A plain HTTP request with headers fetch() will not set (Host). */
function raw(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A one-call run streamed to `inspector`, delivered before this resolves. */
async function quickRun(runId: string, inspector: VisualizerInspector) {
  const client = new ScriptedClient({ responses: [{ type: "tool_calls", toolCalls: [{ tool: "finish", args: { summary: "ok" } }] }] });
  await new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }), inspect: inspector }).run(refundsWorkflow, "hi", { runId });
  await inspector.close();
}

/** This machine's first non-loopback IPv4 address: a peer the guard must not take for loopback. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

describe("POST /api/runs/:runId/decisions", () => {
  let dir: string;
  let store: FileRunStore;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "forge-viz-decide-"));
    store = new FileRunStore({ dir });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("records an approval; the run list shows the run waiting, then its request decided; the run then finishes", async () => {
    const run = await parkedRun(store, "d-approve", [{ order: "A1", amount: 500 }]);
    const { url } = await serve({ store, workflows: [refundsWorkflow] });
    // Its replay re-drives it up to the wait.
    expect(await (await fetch(`${url}/api/runs/d-approve/replay`)).json()).toMatchObject({ state: "waiting" });
    const listed = (await (await fetch(`${url}/api/runs`)).json()) as { runs: RunSummary[] };
    const summary = listed.runs.find((r) => r.runId === "d-approve")!;
    expect(summary).toMatchObject({ status: "waiting", state: "awaitingHuman", requests: [{ callId: run.callIds[0], tool: "refund", kind: "approval", args: { order: "A1", amount: 500 } }] });
    expect(summary.requests![0]).not.toHaveProperty("parameters");
    expect(summary.requests![0]!.decision).toBeUndefined();

    const decided = await json(await post(`${url}/api/runs/d-approve/decisions`, { callId: run.callIds[0], decision: { type: "approve" } }));
    expect(decided).toEqual({ status: 200, body: { runId: "d-approve", callId: run.callIds[0], tool: "refund", duplicate: false, pending: [] } });
    expect((await store.events("d-approve")).filter((e) => e.type === "decision")).toMatchObject([{ callId: run.callIds[0], decision: { type: "approve" } }]);
    // A double click: the same decision again writes nothing.
    expect((await json(await post(`${url}/api/runs/d-approve/decisions`, { callId: run.callIds[0], decision: { type: "approve" } }))).body).toMatchObject({ duplicate: true });
    const again = (await (await fetch(`${url}/api/runs`)).json()) as { runs: RunSummary[] };
    expect(again.runs.find((r) => r.runId === "d-approve")).toMatchObject({ status: "waiting", requests: [{ decision: { type: "approve", at: expect.any(Number) } }] });

    await expect(run.proceed()).resolves.toEqual({ status: "done", runId: "d-approve", result: "refunded 500 on A1" });
    // The run list reads the store at most once a second.
    const listedRun = async () => ((await (await fetch(`${url}/api/runs`)).json()) as { runs: RunSummary[] }).runs.find((r) => r.runId === "d-approve")!;
    await expect.poll(async () => (await listedRun()).status, { timeout: 30_000 }).toBe("done");
    expect((await listedRun()).requests).toBeUndefined();
    // Its replay takes the decision from the log, as the run did.
    const replay = (await (await fetch(`${url}/api/runs/d-approve/replay`)).json()) as { state: string; events: { type: string; event?: { type: string } }[] };
    expect(replay.state).toBe("done");
    expect(replay.events.filter((e) => e.type === "@xstate.event" && e.event?.type === "human.decide")).toHaveLength(1);
  });

  it("answers 400, 404 and 409 with the problem in the body", async () => {
    const run = await parkedRun(store, "d-statuses", [{ order: "B1", amount: 300 }]);
    const { url } = await serve({ store, workflows: [refundsWorkflow] });
    const at = `${url}/api/runs/d-statuses/decisions`;
    const callId = run.callIds[0]!;
    const cases: [string, () => Promise<Response>, number, string, string?][] = [
      ["not JSON", () => post(at, "{nope"), 400, "bad_json"],
      ["not sent as JSON", () => post(at, JSON.stringify({ callId, decision: { type: "approve" } }), { "content-type": "text/plain" }), 400, "bad_content_type"],
      ["no decision", () => post(at, { callId }), 400, "bad_decision"],
      ["an unknown decision", () => post(at, { callId, decision: { type: "maybe" } }), 400, "bad_decision"],
      ["a bad call id", () => post(at, { callId: 7, decision: { type: "approve" } }), 400, "bad_body"],
      ["a reject without a reason", () => post(at, { callId, decision: { type: "reject", reason: " " } }), 400, "FORGE_HUMAN_DECISION", "invalid_decision"],
      ["a bad run id", () => post(`${url}/api/runs/-x/decisions`, { decision: { type: "approve" } }), 400, "bad_run_id"],
      ["no such run", () => post(`${url}/api/runs/nobody/decisions`, { decision: { type: "approve" } }), 404, "no_such_run"],
      ["an unknown call", () => post(at, { callId: "nope", decision: { type: "approve" } }), 409, "FORGE_HUMAN_DECISION", "unknown_call"],
      ["an answer to an approval", () => post(at, { callId, decision: { type: "answer", answer: "yes" } }), 409, "FORGE_HUMAN_DECISION", "wrong_kind"],
      ["edited args the schema refuses", () => post(at, { callId, decision: { type: "approve", args: { order: "B1", amount: -5 } } }), 409, "FORGE_HUMAN_DECISION", "invalid_args"],
    ];
    for (const [what, response, status, code, problem] of cases) {
      const { status: got, body } = await json(await response());
      expect({ what, got, code: body.error?.code, problem: body.error?.problem }).toEqual({ what, got: status, code, problem });
    }
    expect((await store.events("d-statuses")).filter((e) => e.type === "decision")).toEqual([]);

    // A runner holds the run: 409 with the lease's time left (and Retry-After).
    const lease = await store.lock("d-statuses");
    const locked = await post(at, { callId, decision: { type: "approve" } });
    expect(locked.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await json(locked)).toMatchObject({ status: 409, body: { error: { code: "FORGE_RUN_LOCKED", expiresInMs: expect.any(Number) } } });
    await lease.release();

    expect((await json(await post(at, { callId, decision: { type: "reject", reason: "too much" } }))).status).toBe(200);
    expect(await json(await post(at, { callId, decision: { type: "approve" } }))).toMatchObject({ status: 409, body: { error: { problem: "already_decided" } } });
    await expect(run.proceed()).resolves.toMatchObject({ status: "done", result: expect.stringMatching(/^\[Rejected\].*too much/) });
    // The run is done: no person is waited for any more.
    expect(await json(await post(at, { callId, decision: { type: "reject", reason: "late" } }))).toMatchObject({ status: 409, body: { error: { problem: "not_waiting" } } });
  });

  it("two decisions at once on one run (two tabs) are both recorded", async () => {
    const run = await parkedRun(store, "d-both", [{ order: "C1", amount: 200 }, { order: "C2", amount: 300 }]);
    const { url } = await serve({ store, workflows: [refundsWorkflow] });
    const [rejected, approved] = await Promise.all([
      post(`${url}/api/runs/d-both/decisions`, { callId: run.callIds[0], decision: { type: "reject", reason: "duplicate order" } }),
      post(`${url}/api/runs/d-both/decisions`, { callId: run.callIds[1], decision: { type: "approve" } }),
    ]);
    expect([rejected.status, approved.status]).toEqual([200, 200]);
    expect((await store.events("d-both")).filter((e) => e.type === "decision").map((e) => (e as { decision: { type: string } }).decision.type).sort()).toEqual(["approve", "reject"]);
    await expect(run.proceed()).resolves.toMatchObject({ status: "done", result: expect.stringMatching(/^\[Rejected\].*duplicate order.* \| refunded 300 on C2$/) });
  });

  it("answers 404 when the visualizer has no store", async () => {
    const { url } = await serve({});
    expect(await json(await post(`${url}/api/runs/r1/decisions`, { decision: { type: "approve" } }))).toMatchObject({ status: 404, body: { error: { code: "no_store" } } });
  });
});

describe("the guard in front of /api", () => {
  const fromPeer = (address: string) => ({ incoming: { socket: { remoteAddress: address } } });
  const request = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) => new Request(`http://127.0.0.1:4848${path}`, { ...init, headers: { host: "127.0.0.1:4848", ...headers } });

  it("loopback by default: another host is refused without a token, and so is a decision from it", async () => {
    const viz = createVisualizer({});
    expect((await viz.fetch(request("/api/runs"), fromPeer("127.0.0.1"))).status).toBe(200);
    expect((await viz.fetch(request("/api/runs"), fromPeer("::ffff:127.0.0.1"))).status).toBe(200);
    const refused = await viz.fetch(request("/api/runs"), fromPeer("203.0.113.9"));
    expect(await json(refused)).toMatchObject({ status: 403, body: { error: { code: "loopback_only" } } });
    const decision = request("/api/runs/r1/decisions", { "content-type": "application/json" }, { method: "POST", body: JSON.stringify({ decision: { type: "approve" } }) });
    expect((await viz.fetch(decision, fromPeer("203.0.113.9"))).status).toBe(403);
    // The page's own files carry no data.
    expect((await viz.fetch(request("/"), fromPeer("203.0.113.9"))).status).toBe(200);
  });

  it("with a token, another host needs it (Bearer, or ?token= for EventSource); loopback does not", async () => {
    const token = "a-token-of-24-characters";
    const viz = createVisualizer({ token });
    const peer = fromPeer("203.0.113.9");
    expect(await json(await viz.fetch(request("/api/runs"), peer))).toMatchObject({ status: 401, body: { error: { code: "token_required" } } });
    expect(await json(await viz.fetch(request("/api/runs", { authorization: "Bearer wrong-token-wrong-token" }), peer))).toMatchObject({ status: 401, body: { error: { code: "bad_token" } } });
    expect((await viz.fetch(request("/api/runs", { authorization: `Bearer ${token}` }), peer)).status).toBe(200);
    expect((await viz.fetch(request(`/api/runs?token=${token}`), peer)).status).toBe(200);
    expect((await viz.fetch(request("/api/runs"), fromPeer("127.0.0.1"))).status).toBe(200);
    expect(() => createVisualizer({ token: "short" })).toThrow(/at least 16 characters/);
  });

  it("refuses a rebinding Host and a request from another origin, even on loopback", async () => {
    const { url } = await serve({});
    expect((await raw(`${url}/api/runs`, {})).status).toBe(200);
    expect((await raw(`${url}/api/runs`, { host: "localhost" })).status).toBe(200);
    const rebound = await raw(`${url}/api/runs`, { host: "attacker.example:4848" });
    expect(rebound.status).toBe(403);
    const csrf = await post(`${url}/api/runs/r1/decisions`, { decision: { type: "approve" } }, { "content-type": "application/json", origin: "https://attacker.example" });
    expect(await json(csrf)).toMatchObject({ status: 403, body: { error: { code: "cross_origin" } } });
    const sameOrigin = await post(`${url}/api/runs/r1/decisions`, { decision: { type: "approve" } }, { "content-type": "application/json", origin: url });
    expect(sameOrigin.status).toBe(404); // through the guard: this visualizer has no store
  });

  it("bound beyond loopback: makes up a token, puts it in the URL, and a real peer on another address needs it", async () => {
    // Never skipped: a machine without a non-loopback interface fails here, loudly.
    expect(external, "this test needs a non-loopback IPv4 interface to play the remote peer").toBeDefined();
    const { url, port, token, viz } = await serve({}, "0.0.0.0");
    expect(token).toMatch(/^[\w-]{32}$/);
    expect(viz.token).toBe(token);
    expect(url).toBe(`http://0.0.0.0:${port}/#token=${token}`);
    const there = `http://${external}:${port}`;
    expect((await fetch(`${there}/api/runs`)).status).toBe(401);
    expect((await fetch(`${there}/api/runs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/api/runs`)).status).toBe(200);
    expect((await fetch(`${there}/`)).status).toBe(200);

    // visualizerInspector takes the token from the URL's fragment (and never prints it).
    const errors: Error[] = [];
    await quickRun("g-token", visualizerInspector(`${there}/#token=${token}`, { onError: (e) => errors.push(e) }));
    expect(viz.feed.has("g-token")).toBe(true);
    expect(errors).toEqual([]);
    await quickRun("g-none", visualizerInspector(there, { onError: (e) => errors.push(e) }));
    expect(viz.feed.has("g-none")).toBe(false);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]!.message).toMatch(/HTTP 401/);
    // A URL with a token shows in errors without it.
    const refused: Error[] = [];
    await quickRun("g-down", visualizerInspector(`http://127.0.0.1:1/#token=${token}`, { onError: (e) => refused.push(e) }));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.map((e) => `${e.message} ${(e as { url?: string }).url}`).join("\n")).not.toContain(token!);
  });
});
