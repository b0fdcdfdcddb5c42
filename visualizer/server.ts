/**
 * The visualizer's server: the page (served from memory, no outside requests), the statechart
 * layout, the run list, a live SSE feed per run, replay of stored runs, the ingest endpoint
 * that `visualizerInspector` posts to, and decisions on waiting runs. A Web-standard `fetch`
 * handler plus `listen()`, like the proxy. Everything under /api passes one guard (guard.ts).
 */
import { randomBytes } from "node:crypto";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE, type SSEStreamingApi } from "hono/streaming";
import { errorToJSON, ForgeError, InvalidArgumentError } from "../src/core/errors.js";
import type { Workflow } from "../src/core/workflow.js";
import { isRunId, type RunStore } from "../src/persistence/run-store.js";
import { replayRun } from "../src/runner/replay.js";
import { redactionMapOf } from "../src/telemetry/redact-run.js";
import { listenOn } from "../src/server/listen.js";
import { decisionRoute } from "./decisions.js";
import { Feed, type FeedOptions } from "./feed.js";
import { accessGuard, isLoopbackHost } from "./guard.js";
import { HttpProblem } from "./http-problem.js";
import { loadPage } from "./page-files.js";
import type { FeedEvent, IngestBody, QueueCount, ReplayBody, WireEvent } from "./protocol.js";
import { runList, unknownWorkflow } from "./run-list.js";
import { wireSerializer } from "./wire.js";

export interface VisualizerOptions {
  /** Stored runs to list and replay. */
  store?: RunStore;
  /** Replaying a stored run re-drives its workflow's statechart: the workflows it may name. */
  workflows?: readonly Workflow[];
  feed?: FeedOptions;
  /** Ingest bodies above this are refused with 413 (default 16 MiB). */
  bodyLimitBytes?: number;
  /** SSE comment lines this often keep idle connections open (default 15 s). */
  keepAliveMs?: number;
  /** Shown in the page footer. */
  version?: string;
  /** Every ingested batch is also given here (e.g. to forward to Stately's inspector). */
  onIngest?: (events: readonly WireEvent[]) => void;
  /** Job queues to show (`forge-ts visualize --redis`): polled once a second while a page is open. */
  queues?: { counts(): Promise<QueueCount[]>; lastError(): string | undefined };
  /**
   * What other hosts must present (at least 16 characters). Loopback callers never need it;
   * `listen()` on a non-loopback host without one makes one up and puts it in its URL.
   */
  token?: string;
}

export interface Visualizer {
  /**
   * The app as a fetch handler. `env` is @hono/node-server's bindings (the socket tells the
   * guard who is asking); called without them, the caller is this process and is trusted.
   */
  fetch(request: Request, env?: unknown): Promise<Response>;
  /** `url` ends in `/#token=…` when bound beyond loopback: the page reads it, so does visualizerInspector. */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number; host: string; token?: string }>;
  close(): Promise<void>;
  readonly feed: Feed;
  /** What other hosts must present (see VisualizerOptions.token), once known. */
  readonly token: string | undefined;
  /** Bytes of the page's files (everything a browser loads). */
  readonly pageBytes: number;
}

/** A browser this far behind is disconnected; it reconnects and catches up from the buffer. */
const MAX_PENDING_WRITES = 5_000;

/**
 * @example
 * const viz = createVisualizer({ store: new FileRunStore({ dir: ".forge" }), workflows: [workflow] });
 * const { url } = await viz.listen({ port: 4848 });
 */
export function createVisualizer(options: VisualizerOptions = {}): Visualizer {
  const { store, onIngest } = options;
  if (options.token !== undefined && (typeof options.token !== "string" || options.token.length < 16 || /\s/.test(options.token))) {
    throw new InvalidArgumentError("token", "expected at least 16 characters without spaces (or leave it out: listen() beyond loopback makes one up)");
  }
  let token = options.token;
  const workflows = new Map<string, Workflow>();
  for (const w of options.workflows ?? []) {
    if (workflows.has(w.name) && workflows.get(w.name) !== w) throw new InvalidArgumentError("workflows", `two workflows are named "${w.name}"`);
    workflows.set(w.name, w);
  }
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const feed = new Feed(options.feed);
  const page = loadPage();
  const pageBytes = [...page.values()].reduce((n, f) => n + f.body.byteLength, 0);
  const streams = new Set<SSEStreamingApi>();
  const replays = new Map<string, Promise<ReplayBody>>();
  const runs = runList(feed, store, workflows);
  const summaries = runs.summaries;
  /** Run-list streams to push now (a decision changed a run), not at their next poll. */
  const listChanged = new Set<() => void>();

  const app = new Hono();
  app.onError((error, c) => {
    if (error instanceof HttpProblem) return c.json({ error: { code: error.code, message: error.message, ...error.extra } }, error.status, error.headers);
    const json = errorToJSON(error);
    return c.json({ error: { code: json.code, message: json.message } }, ForgeError.isInstance(error) && error.code === "FORGE_INVALID_ARGUMENT" ? 400 : 500);
  });
  app.notFound((c) => c.json({ error: { code: "not_found", message: `no such path: ${c.req.method} ${c.req.path}` } }, 404));
  app.use("/api/*", accessGuard(() => token));

  for (const [name, file] of page) {
    app.get(name === "index.html" ? "/" : `/${name}`, (c) => c.body(file.body as Uint8Array<ArrayBuffer>, 200, { "content-type": file.type, "cache-control": "no-cache" }));
  }

  app.get("/api/info", (c) => c.json({ version: options.version ?? "", pageBytes, store: store ? store.constructor.name : null }));

  app.get("/api/graph", async (c) => {
    const { workflowLayout } = await import("./layout.js");
    return c.json(await workflowLayout());
  });

  app.get("/api/runs", async (c) => c.json({ runs: await summaries() }));

  app.post(
    "/api/ingest",
    bodyLimit({
      maxSize: options.bodyLimitBytes ?? 16 * 1024 * 1024,
      onError: () => {
        throw new HttpProblem(413, "too_large", `ingest body over ${options.bodyLimitBytes ?? 16 * 1024 * 1024} bytes: send smaller batches`);
      },
    }),
    async (c) => {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch (error) {
        throw new HttpProblem(400, "bad_json", `ingest body is not JSON: ${(error as Error).message}`);
      }
      const events = checkedIngest(body);
      feed.ingest(events);
      onIngest?.(events);
      return c.body(null, 204);
    },
  );

  // The run list: all of it on connect, again whenever it changes (stored runs are polled).
  app.get("/api/feed", (c) =>
    sse(c, async (stream) => {
      let last = "";
      let timer: NodeJS.Timeout | undefined;
      const push = async () => {
        const json = JSON.stringify(await summaries());
        if (json !== last && !stream.aborted) await stream.writeSSE({ event: "runs", data: (last = json) });
      };
      const soon = () => (timer ??= setTimeout(() => ((timer = undefined), void push().catch(() => stream.abort())), 100));
      const off = feed.onChange(soon);
      listChanged.add(soon);
      const poll = setInterval(soon, 2_000);
      // Queue counts, when the visualizer watches queues: one poll at a time (Redis may be away).
      let lastQueues = "";
      let counting = false;
      const pushQueues = async () => {
        if (!options.queues || counting || stream.aborted) return;
        counting = true;
        try {
          const json = JSON.stringify({ queues: await options.queues.counts(), error: options.queues.lastError() ?? null });
          if (json !== lastQueues && !stream.aborted) await stream.writeSSE({ event: "queues", data: (lastQueues = json) });
        } catch (error) {
          if (!stream.aborted) await stream.writeSSE({ event: "queues", data: (lastQueues = JSON.stringify({ queues: [], error: (error as Error).message })) });
        } finally {
          counting = false;
        }
      };
      const queuePoll = options.queues ? setInterval(() => void pushQueues(), 1_000) : undefined;
      stream.onAbort(() => {
        off();
        listChanged.delete(soon);
        clearInterval(poll);
        clearInterval(queuePoll);
        clearTimeout(timer);
      });
      await push();
      await pushQueues();
    }),
  );

  // One run's events; Last-Event-ID (or ?after=) resumes after the last event the browser has.
  app.get("/api/runs/:runId/feed", (c) => {
    const runId = checkedRunId(c.req.param("runId"));
    const after = resumePoint(c.req.header("last-event-id") ?? c.req.query("after"));
    return sse(c, async (stream) => {
      let last = after;
      let pending = 0;
      let chain = Promise.resolve();
      const send = (event: FeedEvent) => {
        if (event.id <= last || stream.aborted) return;
        last = event.id;
        if (++pending > MAX_PENDING_WRITES) return void stream.abort();
        chain = chain.then(() => stream.writeSSE({ event: "inspect", id: String(event.id), data: JSON.stringify(event) })).finally(() => void pending--);
      };
      // Subscribed before reading the buffer (both synchronous), so nothing falls in between.
      const off = feed.subscribe(runId, send);
      stream.onAbort(off);
      const slice = feed.since(runId, after);
      if (slice.lost > 0) chain = chain.then(() => stream.writeSSE({ event: "gap", data: JSON.stringify({ lost: slice.lost }) }));
      for (const event of slice.events) send(event);
      await chain;
    });
  });

  // A person's decision on a waiting run: recorded in the store; whoever runs the run applies it.
  const [decisionLimit, recordDecision] = decisionRoute(store, () => {
    runs.invalidate();
    for (const push of listChanged) push();
  });
  app.post("/api/runs/:runId/decisions", decisionLimit, recordDecision);

  app.get("/api/runs/:runId/replay", async (c) => {
    const runId = checkedRunId(c.req.param("runId"));
    if (!store) throw new HttpProblem(404, "no_store", "this visualizer has no run store (start it with --store DIR)");
    const checkpoint = await store.latest(runId);
    if (!checkpoint) throw new HttpProblem(404, "no_such_run", `the store has no run ${runId}`);
    const workflow = workflows.get(checkpoint.workflow);
    if (!workflow) throw new HttpProblem(422, "unknown_workflow", unknownWorkflow(checkpoint.workflow));
    // A run's log only grows: a replay is good until the run's next checkpoint.
    const key = `${runId}@${checkpoint.seq}`;
    let replay = replays.get(key);
    if (!replay) {
      replay = replayEvents(store, runId, workflow);
      replays.set(key, replay);
      replay.catch(() => replays.delete(key));
      if (replays.size > 32) replays.delete(replays.keys().next().value!);
    }
    return c.json(await replay);
  });

  function sse(c: Context, body: (stream: SSEStreamingApi) => Promise<void>): Response {
    return streamSSE(c, async (stream) => {
      streams.add(stream);
      const ping = setInterval(() => void stream.write(": keep-alive\n\n").catch(() => stream.abort()), keepAliveMs);
      stream.onAbort(() => {
        clearInterval(ping);
        streams.delete(stream);
      });
      // A dropped browser retries after 1 s (EventSource's default is up to 3 s), resuming by id.
      await stream.write("retry: 1000\n\n");
      await body(stream);
      // Open until the browser leaves or the server closes.
      await new Promise<void>((resolve) => stream.onAbort(resolve));
    });
  }

  let server: Promise<{ server: import("node:http").Server }> | undefined;
  return {
    fetch: (request, env) => Promise.resolve(app.fetch(request, env)),
    feed,
    pageBytes,
    get token() {
      return token;
    },
    async listen({ port = 4848, host = "127.0.0.1" } = {}) {
      if (server) throw new InvalidArgumentError("listen", "this visualizer is already listening");
      const beyondLoopback = !isLoopbackHost(host);
      if (beyondLoopback) token ??= randomBytes(24).toString("base64url");
      const listening = listenOn(app.fetch, port, host);
      server = listening;
      const address = (await listening).address;
      return beyondLoopback ? { ...address, url: `${address.url}/#token=${token}`, token: token! } : address;
    },
    async close() {
      for (const stream of streams) stream.abort();
      const pending = server;
      server = undefined;
      const s = pending && (await pending.catch(() => undefined))?.server;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
  };
}

async function replayEvents(store: RunStore, runId: string, workflow: Workflow): Promise<ReplayBody> {
  // The workflow's `redact` names too: a run stored before runs carried their own map is masked as well.
  const redact = redactionMapOf(workflow.tools);
  const serialize = wireSerializer(Date.now, redact ? { redact } : {});
  const events: WireEvent[] = [];
  const replay = await replayRun(store, runId, workflow, {
    inspect: (event) => events.push(...serialize(event)),
  }).catch((error: unknown) => {
    if (ForgeError.isInstance(error) && error.code === "FORGE_RUN_NOT_REPLAYABLE") throw new HttpProblem(422, "not_replayable", error.message);
    throw error;
  });
  return { runId, workflow: workflow.name, state: replay.state, events };
}

function checkedRunId(runId: string): string {
  if (!isRunId(runId)) throw new HttpProblem(400, "bad_run_id", `${JSON.stringify(runId)} is not a run id`);
  return runId;
}

function resumePoint(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 0;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new HttpProblem(400, "bad_event_id", `Last-Event-ID / after must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

const WIRE_TYPES = new Set(["@xstate.actor", "@xstate.event", "@xstate.snapshot", "@xstate.microstep", "@xstate.action", "forge.chunk"]);

/** An ingest body checked enough that the feed and the page can trust its fields. */
function checkedIngest(body: unknown): WireEvent[] {
  const events = (body as Partial<IngestBody> | null)?.events;
  if (!Array.isArray(events)) throw new HttpProblem(400, "bad_body", 'expected {"events": [...]}');
  events.forEach((e: unknown, i) => {
    const event = e as Partial<Record<string, unknown>> | null;
    const problem =
      !event || typeof event !== "object"
        ? "not an object"
        : !WIRE_TYPES.has(event.type as string)
          ? `unknown type ${JSON.stringify(event.type)}`
          : !isRunId(event.runId)
            ? `bad runId ${JSON.stringify(event.runId)}`
            : typeof event.sessionId !== "string" || typeof event.rootId !== "string"
              ? "sessionId and rootId must be strings"
              : typeof event.at !== "number"
                ? "at must be a number"
                : undefined;
    if (problem) throw new HttpProblem(400, "bad_event", `events[${i}]: ${problem}`);
  });
  return events as WireEvent[];
}
