import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { TieredCompact } from "../../src/context/tiered-compact.js";
import { stateName } from "../../src/loop/state-name.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import type { WorkflowRunnerOptions } from "../../src/runner/options.js";
import { loadBatchConfig, runBatch } from "../../eval/batch.js";
import type { RunRecord } from "../../eval/run-record.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import { visualizerInspector, VisualizerDeliveryError } from "../../visualizer/inspector.js";
import type { FeedEvent, ReplayBody, RunSummary, WireEvent } from "../../visualizer/protocol.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";

const open: Visualizer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
});

async function serve(options: Parameters<typeof createVisualizer>[0] = {}): Promise<{ viz: Visualizer; url: string }> {
  const viz = createVisualizer(options);
  open.push(viz);
  const { url } = await viz.listen({ port: 0 });
  return { viz, url };
}

const demo = supplierQuoteWorkflow();

function demoRun(runId: string, options: Partial<WorkflowRunnerOptions> = {}, latencyMs = 0) {
  const runner = new WorkflowRunner({
    client: new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "small-model", seed: 15, usage: true, latencyMs }),
    contextManager: new ContextManager({ budgetTokens: 8192, strategy: new TieredCompact({ keepRecent: 2 }) }),
    maxIterations: 12,
    ...options,
  });
  return runner.run(demo.workflow, demo.userInput, { promptVars: demo.promptVars, runId });
}

/** Read an SSE response until `stop` says so (or it ends); the connection is then dropped. */
async function readSse(url: string, headers: Record<string, string>, stop: (messages: EventSourceMessage[]) => boolean): Promise<EventSourceMessage[]> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const messages: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => messages.push(m) });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (!stop(messages)) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } finally {
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
  return messages;
}

const inspects = (messages: EventSourceMessage[]) => messages.filter((m) => m.event === "inspect").map((m) => JSON.parse(m.data) as FeedEvent);
const isDone = (e: FeedEvent) => e.type === "@xstate.snapshot" && e.snapshot.status !== "active";
const states = (events: readonly WireEvent[]) =>
  events.filter((e): e is Extract<WireEvent, { type: "@xstate.microstep" }> => e.type === "@xstate.microstep").map((e) => stateName(e.value));

describe("visualizer server", () => {
  it("takes a live run from visualizerInspector and streams it to a browser in order, with ids", async () => {
    const { viz, url } = await serve();
    const watching = readSse(`${url}/api/runs/live-1/feed`, {}, (m) => inspects(m).some(isDone));
    const seenStates: string[] = [];
    const result = await demoRun("live-1", { inspect: visualizerInspector(url), onStateChange: (s) => seenStates.push(s) }, 5);
    expect(result).toContain("Q-PN-4471-250");
    const events = inspects(await watching);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events).toEqual(viz.feed.since("live-1").events);
    // Every state the runner reported, in order, is among the microsteps (which add eventless steps).
    const micro = states(events);
    let at = 0;
    for (const s of seenStates) at = micro.indexOf(s, at) + 1 || expect.fail(`state ${s} missing after microstep ${at}`);
    expect(micro.at(-1)).toBe("done");
    const emitted = events.flatMap((e) => (e.type === "@xstate.action" ? [e.action.event] : []));
    expect(emitted.filter((e) => e.type === "history.message").map((e) => (e.message as { meta: { type: string } }).meta.type)).toContain("step_nudge");
    expect(events.some((e) => e.type === "@xstate.snapshot" && (e.snapshot.context.validation as { rescued?: boolean } | undefined)?.rescued === true)).toBe(true);
    const [summary] = (await (await fetch(`${url}/api/runs`)).json()).runs as RunSummary[];
    expect(summary).toMatchObject({ runId: "live-1", workflow: "supplier_quote", live: false, stored: false, state: "done", status: "done", iteration: 5 });
  });

  it("resumes a dropped feed from Last-Event-ID with exactly the events it missed", async () => {
    const { url } = await serve();
    await demoRun("r-1", { inspect: visualizerInspector(url) });
    const all = inspects(await readSse(`${url}/api/runs/r-1/feed`, {}, (m) => inspects(m).some(isDone)));
    const first = inspects(await readSse(`${url}/api/runs/r-1/feed`, {}, (m) => inspects(m).length >= 17));
    const cut = first.at(-1)!.id;
    const rest = inspects(await readSse(`${url}/api/runs/r-1/feed`, { "last-event-id": String(cut) }, (m) => inspects(m).some(isDone)));
    expect([...first, ...rest]).toEqual(all);
    // The same through ?after= (for clients that cannot set headers).
    expect(inspects(await readSse(`${url}/api/runs/r-1/feed?after=${cut}`, {}, (m) => inspects(m).some(isDone)))).toEqual(rest);
  });

  it("says how many events a resume lost when the run's buffer was cut", async () => {
    const { url } = await serve({ feed: { maxEventsPerRun: 30 } });
    await demoRun("r-2", { inspect: visualizerInspector(url) });
    const messages = await readSse(`${url}/api/runs/r-2/feed`, { "last-event-id": "3" }, (m) => inspects(m).some(isDone));
    expect(messages[0]!.event).toBe("gap");
    const { lost } = JSON.parse(messages[0]!.data) as { lost: number };
    expect(lost).toBeGreaterThan(0);
    const events = inspects(messages);
    const total = events.at(-1)!.id;
    expect(lost).toBe(total - 30 - 3);
    // The newest snapshot among the dropped events, then the 30 kept ones.
    expect(events[0]!.type).toBe("@xstate.snapshot");
    expect(events.slice(1).map((e) => e.id)).toEqual(Array.from({ length: 30 }, (_, i) => total - 29 + i));
  });

  it("replays a stored run to the events its live run showed", async () => {
    const store = new MemoryRunStore();
    const { viz, url } = await serve({ store, workflows: [demo.workflow] });
    await demoRun("stored-1", { inspect: visualizerInspector(url), store });
    const live = viz.feed.since("stored-1").events;
    const response = await fetch(`${url}/api/runs/stored-1/replay`);
    expect(response.status).toBe(200);
    const replay = (await response.json()) as ReplayBody;
    expect(replay).toMatchObject({ runId: "stored-1", workflow: "supplier_quote", state: "done" });
    expect(states(replay.events)).toEqual(states(live));
    const lastSnapshot = (events: readonly WireEvent[]) => events.filter((e) => e.type === "@xstate.snapshot").at(-1);
    expect(lastSnapshot(replay.events)).toMatchObject({ snapshot: (lastSnapshot(live) as { snapshot: unknown }).snapshot });
    const runs = (await (await fetch(`${url}/api/runs`)).json()).runs as RunSummary[];
    expect(runs).toEqual([expect.objectContaining({ runId: "stored-1", live: false, stored: true, replayable: true })]);
  });

  it("lists stored runs it cannot replay with the reason, and refuses their replay with it", async () => {
    const store = new MemoryRunStore();
    await demoRun("other-wf", { store });
    const { url } = await serve({ store });
    const runs = (await (await fetch(`${url}/api/runs`)).json()).runs as RunSummary[];
    expect(runs).toEqual([expect.objectContaining({ runId: "other-wf", stored: true, replayable: false, why: expect.stringContaining("--workflow") })]);
    const refused = await fetch(`${url}/api/runs/other-wf/replay`);
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({ error: { code: "unknown_workflow", message: expect.stringContaining('"supplier_quote"') } });
    expect((await fetch(`${url}/api/runs/missing/replay`)).status).toBe(404);
    expect((await fetch(`${url}/api/runs/..%2Fetc/replay`)).status).toBe(400);
  });

  it("refuses bad ingest bodies with a reason and keeps what it had", async () => {
    const { viz, url } = await serve({ bodyLimitBytes: 1000 });
    const post = (body: string) => fetch(`${url}/api/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const notJson = await post("{nope");
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe("bad_json");
    const badEvent = await post(JSON.stringify({ events: [{ type: "@xstate.snapshot", runId: "../x", sessionId: "x:0", rootId: "x:0", at: 1 }] }));
    expect(await badEvent.json()).toEqual({ error: { code: "bad_event", message: 'events[0]: bad runId "../x"' } });
    expect((await post(JSON.stringify({ events: "no" }))).status).toBe(400);
    expect((await post(JSON.stringify({ events: [], pad: "x".repeat(2000) }))).status).toBe(413);
    expect(viz.feed.runs()).toEqual([]);
  });

  it("serves the page from its own files, with no outside requests, and reports its weight", async () => {
    const { viz, url } = await serve();
    // The page as built (test/global-setup.ts): index.html and app.css, and the modules in js/.
    const dir = new URL("../../visualizer/page/", import.meta.url);
    const files = ["index.html", "app.css", ...readdirSync(new URL("js/", dir)).map((name) => `js/${name}`)];
    expect(files).toContain("js/app.js");
    let total = 0;
    for (const name of files) {
      const body = readFileSync(new URL(name, dir), "utf8");
      total += Buffer.byteLength(body);
      // No CDN, font or script from elsewhere: the page works on an air-gapped box.
      expect(body, name).not.toMatch(/(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
      expect(body, name).not.toMatch(/@import\s+url\(\s*["']?https?:/i);
      const served = await fetch(name === "index.html" ? url : `${url}/${name}`);
      expect(served.status, name).toBe(200);
      expect(await served.text()).toBe(body);
    }
    expect(viz.pageBytes).toBe(total);
    expect(await (await fetch(`${url}/api/info`)).json()).toMatchObject({ pageBytes: total, store: null });
  });

  it("sends the run list on connect and again when runs change", async () => {
    const store = new MemoryRunStore();
    await demoRun("old-1", { store });
    const { url } = await serve({ store, workflows: [demo.workflow] });
    let connected!: () => void;
    const firstList = new Promise<void>((resolve) => (connected = resolve));
    const listed = readSse(`${url}/api/feed`, {}, (m) => {
      if (m.some((x) => x.event === "runs")) connected();
      return m.some((x) => x.event === "runs" && x.data.includes("new-1"));
    });
    await firstList; // the list on connect came before the new run
    await demoRun("new-1", { inspect: visualizerInspector(url) });
    const lists = (await listed).filter((m) => m.event === "runs").map((m) => (JSON.parse(m.data) as RunSummary[]).map((r) => r.runId));
    expect(lists[0]).toEqual(["old-1"]);
    expect(lists.at(-1)).toEqual(expect.arrayContaining(["old-1", "new-1"]));
  });

  it("keeps idle feeds open with SSE comments", async () => {
    const { url } = await serve({ keepAliveMs: 20 });
    const response = await fetch(`${url}/api/runs/quiet/feed`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes(": keep-alive")) text += (await reader.read()).value ?? "";
    await reader.cancel();
  });
});

describe("visualizerInspector", () => {
  it("streams the model's chunks of a streamed run", async () => {
    const { viz, url } = await serve();
    await demoRun("chunks-1", { inspect: visualizerInspector(url), stream: true });
    const chunks = viz.feed.since("chunks-1").events.filter((e) => e.type === "forge.chunk");
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.map((e) => (e as { chunk: { type: string } }).chunk.type)).toContain("text_delta");
  });

  it("never fails a run when the visualizer is away, and says what was dropped", async () => {
    const { url } = await serve();
    const viz = open.pop()!;
    await viz.close(); // the port is now closed
    const errors: VisualizerDeliveryError[] = [];
    const inspector = visualizerInspector(url, { onError: (e) => errors.push(e) });
    await expect(demoRun("away-1", { inspect: inspector })).resolves.toContain("Q-PN-4471-250");
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toBeInstanceOf(VisualizerDeliveryError);
    expect(errors[0]!.message).toContain(url);
    expect(inspector.stats.sent).toBe(0);
    expect(inspector.stats.dropped).toBe(errors.reduce((n, e) => n + e.dropped, 0));
    expect(inspector.stats.queued).toBe(0);
  });

  it("keeps delivering across runs and batches that arrive while a POST is in flight", async () => {
    const { viz, url } = await serve();
    const inspector = visualizerInspector(url, { intervalMs: 1, batchSize: 7 });
    for (const runId of ["again-1", "again-2", "again-3"]) {
      await demoRun(runId, { inspect: inspector });
      expect(viz.feed.since(runId).events.filter(isDone)).toHaveLength(1);
    }
    expect(inspector.stats).toMatchObject({ dropped: 0, queued: 0 });
    expect(inspector.stats.sent).toBe(["again-1", "again-2", "again-3"].reduce((n, id) => n + viz.feed.since(id).events.length, 0));
  });

  it("streams an eval batch, every run under the id of its results-file key", async () => {
    const { viz, url } = await serve();
    const config = loadBatchConfig("sim");
    config.scenarios = selectScenarios({ names: config.scenarios, tags: config.tags }).slice(0, 2).map((s) => s.name);
    const dir = mkdtempSync(path.join(tmpdir(), "forge-viz-batch-"));
    try {
      const records: RunRecord[] = [];
      await runBatch({ config, runs: 2, out: path.join(dir, "r.jsonl"), inspect: visualizerInspector(url), onRecord: (r) => records.push(r) });
      const runs = viz.feed.runs();
      expect(runs.map((r) => r.runId).sort()).toEqual(records.map((r) => r.key.replace(/[^A-Za-z0-9._-]+/g, "_")).sort());
      expect(runs.every((r) => r.status !== "active")).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => visualizerInspector("ftp://x")).toThrow(/http/);
    expect(() => visualizerInspector("not a url")).toThrow(/visualizer's http URL/);
  });
});
