/**
 * The proxy surface: an OpenAI- (Chat Completions and Responses), Anthropic- and Ollama-compatible
 * HTTP server with forge's guardrails inside, as a Web-standard `fetch(request)` handler (mountable
 * in Hono, Node or a test with no socket) plus `listen()`. Stateless per request: any load
 * balancer can scale it out.
 */
import { randomBytes } from "node:crypto";
import { listenOn } from "../server/listen.js";
import { Hono, type Context } from "hono";
import { every } from "hono/combine";
import { browserGuard, jsonOnly, type BrowserPolicy } from "../server/browser-guard.js";
import { boundedBody } from "../server/body-limit.js";
import { isLoopbackHost } from "../server/is-loopback-host.js";
import { InvalidArgumentError } from "../core/errors.js";
import { registerSecret } from "../core/redact.js";
import { createForgeMetrics, metricsResponse, type ForgeMetrics } from "../telemetry/metrics.js";
import type { HealthReport } from "./fleet/backend-health.js";
import { fleetFromConfig, fleetOfOne } from "./fleet/fleet.js";
import { callerAuth, presentedKey } from "./caller-auth.js";
import { countTokens } from "./count-tokens.js";
import { HttpError, toHttpError, type Dialect } from "../proxy-request/http-error.js";
import { listModels, modelListBody } from "./models.js";
import { intake } from "./intake.js";
import { mountOllamaApi } from "./ollama-api.js";
import { ProxyStats, type ProxyStatsSnapshot } from "./proxy-stats.js";
import { isJudged } from "../proxy-request/proxy-request.js";
import { parseJsonObject } from "./request-body.js";
import { checkOptions, type ProxyOptions } from "./proxy-options.js";
import { createRequestRunner, type RunResult } from "./request-run.js";
import { BackendWindows } from "./backend-windows.js";
import { NOTHING_SENT, type ResponseMeta } from "./sse-frames.js";
import { streamedResponse } from "./sse-response.js";
import { RequestTelemetry } from "./request-telemetry.js";

export type { ProxyOptions, ProxyViews } from "./proxy-options.js";

export interface ProxyServer {
  /** The Web-standard handler. */
  fetch(request: Request): Promise<Response>;
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number; host: string }>;
  stats(): ProxyStatsSnapshot;
  /** The metric set `GET /metrics` serves (the `metrics` option, or the proxy's own). */
  readonly metrics: ForgeMetrics;
  /** What `GET /health` answers: each backend up or down (probed, cached for a few seconds) and its load. */
  health(): Promise<HealthReport>;
  /**
   * The context window the proxy enforces for `model` (default: the default model), asked of its
   * first backend as a request would; undefined when nothing says (no check is made then).
   */
  contextWindow(model?: string): Promise<number | undefined>;
  /** The added latencies behind `stats().addedLatencyMs`: a set of workers takes its percentiles over all of theirs. */
  latencySamples(): readonly number[];
  /** Stop accepting, end in-flight requests with an error event or 503, close sockets. */
  close(): Promise<void>;
  /**
   * Stop accepting (/health answers 503 "draining", so a balancer moves on; a new request gets
   * 503), let the requests in flight finish — streams included — for up to `timeoutMs`, then close.
   */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * @example
 * const proxy = createProxy({ client: new OllamaClient({ model: "qwen3:8b" }) });
 * const { url } = await proxy.listen({ port: 8081 });   // point the harness at `${url}/v1`
 */
export function createProxy(options: ProxyOptions): ProxyServer {
  const cfg = checkOptions(options);
  // The callers' key is never echoed back (src/core/redact.ts).
  registerSecret(options.apiKey);
  const client = options.client;
  const fleet = options.config !== undefined ? fleetFromConfig(options.config, options.model) : fleetOfOne(client!, typeof cfg.model === "string" ? cfg.model : "");
  const defaultModel = fleet.defaultModel;
  const stats = new ProxyStats();
  const statsNow = () => stats.snapshot({ waiting: fleet.pool.waiting });
  const metrics = options.metrics ?? createForgeMetrics({ processMetrics: false });
  const windows = new BackendWindows({ contextLength: cfg.contextLength, health: fleet.health });
  const runRequest = createRequestRunner(fleet.pool, { forwardModel: cfg.forwardModel, windows });
  // Request ids: a random per-process prefix and a counter (unique without a syscall per request).
  const idPrefix = randomBytes(6).toString("hex");
  let idCounter = 0;
  const inFlight = new Set<AbortController>();
  /** Called once nothing is in flight (drain). */
  const whenIdle: (() => void)[] = [];
  let closing = false;
  let draining = false;

  const dialectOf = (c: Context): Dialect => dialectOfPath(c.req.path);
  const app = new Hono();
  app.onError((error, c) => {
    const http = error instanceof HttpError ? error : new HttpError(500, "api_error", "Internal proxy error");
    if (!(error instanceof HttpError)) console.error("forge-ts proxy: unexpected error", error);
    if (http.status < 500) {
      stats.rejected++;
      // Refused before any backend was asked: no backend, and the caller's model name is not
      // trusted as a label (a 404 for an unknown model would add a series per name).
      if (isCompletion(c.req.path)) metrics.requests.inc({ api: dialectOf(c), backend: "none", model: "unknown", outcome: "rejected" });
    }
    return http.render(dialectOf(c));
  });
  app.notFound((c) => {
    stats.rejected++;
    return new HttpError(404, "not_found_error", `No route for ${c.req.method} ${c.req.path}`).render(dialectOf(c));
  });
  // Known once listen() has a host: the guard applies to requests that came over its socket.
  let browserPolicy: BrowserPolicy | undefined;
  app.use("*", browserGuard(() => browserPolicy, (c, refusal) => new HttpError(refusal.status, "permission_error", refusal.message).render(dialectOf(c))));
  const health = async (): Promise<HealthReport> => fleet.health.report(fleet.pool.load());
  app.get("/health", async (c) => {
    // A backend that does not answer makes the proxy unhealthy too (503), and says which.
    if (closing || draining) return c.json({ status: closing ? "closing" : "draining" }, 503);
    const report = await health();
    const single = client !== undefined ? { backend: client.apiFormat, model: defaultModel } : {};
    return c.json({ ...report, ...single, ...options.views?.health?.() }, report.status === "ok" ? 200 : 503);
  });
  if (options.apiKey !== undefined) app.use("*", callerAuth(options.apiKey));
  const views = options.views;
  app.get("/forge/stats", async (c) => c.json(views ? await views.stats() : statsNow()));
  // Behind the API key like every route but /health: a scraper sends it as a bearer token
  // (Prometheus: `authorization: { credentials: … }` in the scrape config).
  app.get("/metrics", () => (views ? views.metrics() : metricsResponse(metrics)));
  app.get("/v1/models", async (c) => {
    const anthropic = c.req.header("anthropic-version") !== undefined;
    return c.json(fleet.models !== undefined ? modelListBody(fleet.models, anthropic) : await listModels(client!, defaultModel, anthropic, c.req.raw.signal));
  });
  // Every route with a body: JSON only (no "simple" cross-site POST reaches the model), and bounded.
  const limit = every(
    jsonOnly((c, message) => new HttpError(415, "invalid_request_error", message).render(dialectOf(c))),
    boundedBody(cfg.bodyLimit, () => {
      throw new HttpError(413, "request_too_large", `Request body exceeds ${cfg.bodyLimit} bytes`);
    }),
  );
  app.post("/v1/chat/completions", limit, (c) => complete(c, "openai"));
  app.post("/v1/messages", limit, (c) => complete(c, "anthropic"));
  app.post("/v1/responses", limit, (c) => complete(c, "responses"));
  mountOllamaApi(app, { fleet, windows, limit, chat: (c) => complete(c, "ollama"), unknownModel, refused: () => stats.rejected++ });
  // Retrieve, cancel, delete, input_items, compact: all about stored responses, which a stateless proxy has none of.
  app.all("/v1/responses/*", (c) => {
    stats.rejected++;
    return new HttpError(404, "not_found_error", `No route for ${c.req.method} ${c.req.path}: the forge-ts proxy is stateless and stores no responses; POST /v1/responses with the whole conversation in \`input\``).render("responses");
  });
  app.post("/v1/messages/count_tokens", limit, async (c) => {
    const body = parseJsonObject(await c.req.text());
    // With a fleet, the backend that would serve the model counts, under its own model name.
    const model = typeof body.model === "string" ? body.model : "";
    const backend = fleet.pool.backendFor(model);
    if (!backend) throw unknownModel(model);
    const callerKey = cfg.forwardAuth ? presentedKey(c.req.header("authorization"), c.req.header("x-api-key")) : undefined;
    return countTokens(body, backend.client, c.req.raw.signal, {
      forwardModel: backend.model === undefined && cfg.forwardModel,
      apiKey: callerKey ?? backend.apiKey,
    });
  });

  async function complete(c: Context, dialect: Dialect): Promise<Response> {
    if (closing || draining) throw new HttpError(503, "api_error", "The proxy is shutting down");
    const door = await intake(await c.req.text(), dialect);
    const { request } = door;
    if (!fleet.pool.serves(request.model)) throw unknownModel(request.model);
    stats.requests++;
    const started = performance.now();
    const requestId = `${idPrefix}${(idCounter++).toString(36).padStart(6, "0")}`;
    const guarded = isJudged(request);
    const telemetry = new RequestTelemetry({ metrics, api: dialect, model: request.model || defaultModel, headers: c.req.raw.headers, traceContent: cfg.traceContent });
    const meta: ResponseMeta = {
      id: `${door.idPrefix}${requestId}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model || defaultModel,
      guarded,
      includeUsage: request.includeUsage,
    };
    const controller = new AbortController();
    const onCallerGone = () => controller.abort("client disconnected");
    c.req.raw.signal.addEventListener("abort", onCallerGone, { once: true });
    inFlight.add(controller);
    stats.inFlight++;
    let finished = false;
    const done = (result: RunResult) => {
      if (finished) return;
      finished = true;
      inFlight.delete(controller);
      stats.inFlight--;
      if (inFlight.size === 0) for (const idle of whenIdle.splice(0)) idle();
      c.req.raw.signal.removeEventListener("abort", onCallerGone);
      const addedMs = performance.now() - started - result.backendMs;
      stats.record(result.outcome, guarded, addedMs);
      telemetry.finish(result.outcome, addedMs, request.messages);
    };
    const apiKey = cfg.forwardAuth ? presentedKey(c.req.header("authorization"), c.req.header("x-api-key")) : undefined;
    const start = (onDelta?: (channel: "content" | "reasoning", text: string) => void) =>
      runSafely(() =>
        runRequest({ input: { requestId, request, options: cfg.guardrails }, signal: controller.signal, onDelta, apiKey, telemetry }),
      );
    const failure = (result: RunResult) => failureResponse(result, dialect);
    const baseHeaders: Record<string, string> = { "x-forge-request-id": requestId };
    if (request.omittedTools !== undefined) baseHeaders["x-forge-omitted-tools"] = headerList(request.omittedTools);
    if (request.stream) {
      return streamedResponse(c, {
        dialect,
        encoder: door.encoder(meta),
        wire: door.wire,
        keepAliveMs: cfg.keepAliveMs,
        start,
        abort: (reason) => controller.abort(reason),
        done,
        failure,
        headers: baseHeaders,
      });
    }
    const result = await start(undefined);
    done(result);
    const { outcome } = result;
    if (outcome.kind !== "answer") return failure(result);
    const headers: Record<string, string> = { ...baseHeaders };
    if (guarded) headers["x-forge-attempts"] = String(outcome.attempts);
    if (outcome.exhausted) headers["x-forge-exhausted"] = outcome.exhausted.reason;
    const dropped = outcome.exhausted?.dropped;
    if (dropped) headers["x-forge-dropped-calls"] = String(dropped.unoffered + dropped.overLimit);
    return c.json(door.body(outcome, meta), 200, headers);
  }

  function failureResponse(result: RunResult, dialect: Dialect): Response {
    const { outcome } = result;
    if (outcome.kind === "failed") return toHttpError(outcome.error).render(dialect);
    if (outcome.kind === "cancelled") return new HttpError(503, "api_error", `Request cancelled: ${outcome.reason}`).render(dialect);
    throw new Error("failureResponse called for an answer");
  }

  let server: Promise<{ server: import("node:http").Server }> | undefined;
  /** Resolves once the server has stopped listening and its last connection ended (drain, then close, share it). */
  let stopped: Promise<void> | undefined;
  const stopListening = (http: import("node:http").Server) => (stopped ??= new Promise<void>((resolve) => http.close(() => resolve())));
  const proxy: ProxyServer = {
    fetch: (request) => Promise.resolve(app.fetch(request)),
    stats: statsNow,
    latencySamples: () => stats.latencySamples(),
    metrics,
    health,
    async contextWindow(model = "") {
      const backend = fleet.pool.backendFor(model);
      if (backend === undefined) return undefined;
      return (await windows.windowOf(backend, backend.model ?? (model || defaultModel || undefined))).contextLength;
    },
    async listen({ port = 8081, host = "127.0.0.1" } = {}) {
      if (server) throw new InvalidArgumentError("listen", "this proxy is already listening");
      browserPolicy = { loopbackBind: isLoopbackHost(host), corsOrigins: cfg.corsOrigins };
      const listening = listenOn(app.fetch, port, host, cfg.connectionLimits);
      server = listening;
      return (await listening).address;
    },
    async drain(timeoutMs) {
      draining = true;
      const http = server && (await server.catch(() => undefined))?.server;
      // No new connections; idle keep-alive sockets close as they go idle.
      if (http) stopListening(http);
      const sweep = http && setInterval(() => http.closeIdleConnections(), 25);
      let deadline: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        if (inFlight.size === 0) return resolve();
        whenIdle.push(resolve);
        deadline = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(deadline);
      clearInterval(sweep);
      await proxy.close();
    },
    async close() {
      closing = true;
      fleet.health.close();
      for (const controller of inFlight) controller.abort("proxy shutting down");
      const http = server && (await server.catch(() => undefined))?.server;
      if (!http) return;
      // Streams end once their runs see the abort; a keep-alive socket closes as soon as its
      // last response is out (checked every 25 ms), and anything left after 2 s is cut.
      const sweep = setInterval(() => http.closeIdleConnections(), 25);
      const cut = setTimeout(() => http.closeAllConnections(), 2_000);
      http.closeIdleConnections();
      await stopListening(http);
      clearInterval(sweep);
      clearTimeout(cut);
    },
  };
  return proxy;
}

function isCompletion(path: string): boolean {
  return path === "/v1/chat/completions" || path === "/v1/messages" || path === "/v1/responses" || path === "/api/chat";
}

/** Whose words an answer (an error included) is in: Ollama's API lives under /api and at /. */
function dialectOfPath(path: string): Dialect {
  if (path.startsWith("/v1/messages")) return "anthropic";
  if (path.startsWith("/v1/responses")) return "responses";
  return path === "/" || path === "/api" || path.startsWith("/api/") ? "ollama" : "openai";
}

/** Names as one header value: visible ASCII only (names are the caller's), comma-separated. */
function headerList(names: readonly string[]): string {
  return names.map((n) => n.replace(/[^\x21-\x7e]+/g, "_").replace(/,/g, "_")).join(",");
}

function unknownModel(model: string): HttpError {
  const ollama = { message: `model "${model}" not found: this forge-ts proxy does not serve it (GET /api/tags lists the names it serves)` };
  return new HttpError(404, "not_found_error", `Model "${model}" is not served here; GET /v1/models lists the names and aliases`, {}, { dialects: { ollama } });
}

/** A run never rejects: a bug inside it becomes a failed outcome (500), not a hung stream. */
async function runSafely(run: () => Promise<RunResult>): Promise<RunResult> {
  try {
    return await run();
  } catch (error) {
    console.error("forge-ts proxy: request run failed unexpectedly", error);
    return { outcome: { kind: "failed", error: { name: "HttpError", message: "Internal proxy error", statusCode: 500 }, attempts: 0 }, backendMs: 0, sent: NOTHING_SENT };
  }
}
