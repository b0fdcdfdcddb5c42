/**
 * `forge-ts proxy`: serve the OpenAI-, Anthropic- and Ollama-compatible proxy in front of one backend,
 * or of a fleet described by a config file (`--config`). Every flag also reads a FORGE_*
 * environment variable; flags win.
 */
import { jsonFileFlag } from "../cli-kit/json-file-flag.js";
import { redactUrl } from "../core/redact.js";
import { InvalidArgumentError, ProxyConfigError } from "../core/errors.js";
import { createProxy, type ProxyOptions, type ProxyServer } from "../proxy/create-proxy.js";
import { createForgeMetrics } from "../telemetry/metrics.js";
import { loadProxyConfig, type ResolvedProxyConfig } from "../proxy/fleet/proxy-config.js";
import { describePolicy, parsePolicy, type ProxyPolicy, type ProxyPolicyInput } from "../proxy-request/request-policy.js";
import { assertBackend, backendKeyFromEnv, buildClient, DEFAULT_BASE_URLS } from "../cli-kit/backends.js";
import { isLoopbackHost } from "../server/is-loopback-host.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { errorLine } from "../cli-kit/run-cli.js";
import { availableParallelism } from "node:os";
import { isProxyWorker, isQuietWorker, runPrimary, workerViews } from "./proxy-cluster.js";

export const PROXY_HELP = `Usage: forge-ts proxy --backend <name> --model <name> [options]
       forge-ts proxy --config <file> [options]

Serves POST /v1/chat/completions and POST /v1/responses (OpenAI; Codex, the Agents SDK),
POST /v1/messages (Anthropic) and POST /api/chat (Ollama's own API: the ollama library,
LangChain's ChatOllama, Open WebUI...) with forge's guardrails (rescue of text-format tool
calls, retries on unknown tools and bad arguments), plus GET /v1/models, Ollama's /api/tags,
/api/show, /api/ps and /api/version, GET /health, GET /forge/stats and GET /metrics
(Prometheus; behind --api-key like the rest but /health). Point your harness's base URL at
it; an Ollama client's host setting too (ollama-js host, ChatOllama baseUrl, OLLAMA_HOST for
the Python library and the ollama CLI), or --port 11434 with Ollama moved to another port.

Fleet (several backends behind one endpoint; docs/proxy.md has the schema):
  --config <file>           JSON file: backends (per-backend maxConcurrent), model names and
                            aliases routed to them, the wait queue (429 + Retry-After past it),
                            health probes. Least-busy routing, failover before the first byte.
                            Replaces every Backend flag below (combining them exits 2).

Backend:
  --backend <name>          ollama | llamaserver | llamafile | openai | anthropic       [FORGE_BACKEND]
  --model <name>            backend model (Ollama tag, served name, Claude model id)   [FORGE_MODEL]
  --base-url <url>          backend URL (default per backend, e.g. http://127.0.0.1:11434) [FORGE_BASE_URL]
  --mode <mode>             llamaserver/llamafile: native | prompt | auto (default auto) [FORGE_MODE]
  --think <bool>            thinking on/off for models that support it                [FORGE_THINK]
  --backend-api-key <key>   the backend's key, sent on every request (Bearer; anthropic:
                            x-api-key): llama-server --api-key, Ollama behind an auth proxy,
                            vLLM. Else OPENAI_API_KEY (openai only) or ANTHROPIC_API_KEY
                            (anthropic only)                                  [FORGE_BACKEND_API_KEY]
  --timeout <ms>            per backend request: headers wait and idle gap, default 300000 (→ 504) [FORGE_TIMEOUT]
  --pin-model               always use --model, ignore the model name callers send     [FORGE_PIN_MODEL]
  --recommended-sampling    the model card's sampling values (ollama, llamaserver, llamafile;
                            an unknown model is refused)                             [FORGE_RECOMMENDED_SAMPLING]
  --forward-auth            pass each caller's key (Bearer / x-api-key) to the backend
                            instead of --backend-api-key; not with --api-key          [FORGE_FORWARD_AUTH]

Serving:
  --port <n>                default 8081; 11434 for clients that assume Ollama's port
                            (Ollama itself then on another, given with --base-url)    [FORGE_PORT]
  --host <addr>             default 127.0.0.1 (loopback only)                          [FORGE_HOST]
  --api-key <key>           require this key from callers (Bearer or x-api-key)        [FORGE_API_KEY]
  --cors-origin <origin>    a web app's origin (scheme://host[:port]) that may call from a
                            browser: CORS headers and preflights for it; repeatable. Every
                            other page is refused (403), as is a non-loopback Host on a
                            loopback bind (DNS rebinding)               [FORGE_CORS_ORIGIN, comma-separated]
  --body-limit <bytes>      largest request body, default 16777216 (16 MiB)            [FORGE_BODY_LIMIT]
  --max-connections <n>     open sockets at most, default 1024 (more are closed at once;
                            above a thousand, raise ulimit -n too). Headers must arrive
                            within 10 s and a whole request within 60 s [FORGE_MAX_CONNECTIONS]
  --workers <n|auto>        processes serving the one port (node:cluster), default 1; auto:
                            one per core. Each is a whole proxy (nothing is shared but the
                            port); /metrics, /forge/stats and /health answer for all of them; a
                            worker that dies is replaced, five quick deaths in a row exit 1 [FORGE_WORKERS]
  --drain-timeout <ms>      on SIGTERM / Ctrl-C, how long requests in flight (streams too)
                            may take to finish before they are cut, default 30000;
                            meanwhile /health answers 503 and new requests get 503 [FORGE_DRAIN_TIMEOUT]
  --keep-alive-ms <ms>      stream keep-alive interval while validating, default 5000  [FORGE_KEEP_ALIVE_MS]
  --context-length <tokens> the backends' context window, in place of what they report
                            (Ollama /api/show, llama-server /props n_ctx; a config backend's
                            own contextLength wins). Prompts over it get the API's own
                            context-length error (400); Ollama is sent a num_ctx that fits
                            each request, up to it                                    [FORGE_CONTEXT_LENGTH]
  --trace-content           put prompts and answers on the request's OpenTelemetry spans
                            (spans need an SDK loaded, e.g. node --import ./otel.mjs)  [FORGE_TRACE_CONTENT]

Guardrails:
  --max-retries <n>         unusable answers (unknown tool, text where a call is due) per request, default 3 [FORGE_MAX_RETRIES]
  --max-tool-errors <n>     answers with schema-invalid arguments per request, default 2 [FORGE_MAX_TOOL_ERRORS]
  --no-rescue               do not recover tool calls written as text                  [FORGE_NO_RESCUE]
  --inject-respond-tool     offer the model a respond tool; its call returns as plain text [FORGE_INJECT_RESPOND_TOOL]
  --policy <file>           JSON workflow policy: { requiredSteps, terminalTool, prerequisites,
                            maxToolRepeat, maxPrematureAttempts, maxPrereqViolations }, judged
                            from each request's own history (no state kept)   [FORGE_POLICY]

  -h, --help

Exit codes: 0 after a clean shutdown (Ctrl-C / SIGTERM: drained), 1 the server could not start
(or its workers kept dying), 2 bad flags.`;

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes|on)$/i.test(v);

function int(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`--${name}`, `expected an integer >= ${min}, got "${raw}"`);
  return n;
}

/** Parse flags and env; serve until SIGINT/SIGTERM. Resolves to the exit code. */
export async function proxyMain(args: readonly string[], signals: NodeJS.EventEmitter = process): Promise<number> {
  const env = process.env;
  const str = (name: string) => (env[name] !== undefined && env[name] !== "" ? { default: env[name] } : {});
  const { values, tokens } = parseCliArgs({
    args: [...args],
    tokens: true,
    options: {
      config: { type: "string" },
      backend: { type: "string", ...str("FORGE_BACKEND") },
      model: { type: "string", ...str("FORGE_MODEL") },
      "base-url": { type: "string", ...str("FORGE_BASE_URL") },
      mode: { type: "string", ...str("FORGE_MODE") },
      think: { type: "string", ...str("FORGE_THINK") },
      "backend-api-key": { type: "string", ...str("FORGE_BACKEND_API_KEY") },
      "pin-model": { type: "boolean", default: truthy(env.FORGE_PIN_MODEL) },
      "recommended-sampling": { type: "boolean", default: truthy(env.FORGE_RECOMMENDED_SAMPLING) },
      timeout: { type: "string", ...str("FORGE_TIMEOUT") },
      "forward-auth": { type: "boolean", default: truthy(env.FORGE_FORWARD_AUTH) },
      port: { type: "string", default: env.FORGE_PORT ?? "8081" },
      host: { type: "string", default: env.FORGE_HOST ?? "127.0.0.1" },
      "api-key": { type: "string", ...str("FORGE_API_KEY") },
      "max-connections": { type: "string", ...str("FORGE_MAX_CONNECTIONS") },
      "cors-origin": { type: "string", multiple: true, default: env.FORGE_CORS_ORIGIN === undefined ? [] : env.FORGE_CORS_ORIGIN.split(",").map((o) => o.trim()).filter((o) => o !== "") },
      "body-limit": { type: "string", ...str("FORGE_BODY_LIMIT") },
      "keep-alive-ms": { type: "string", ...str("FORGE_KEEP_ALIVE_MS") },
      "context-length": { type: "string", ...str("FORGE_CONTEXT_LENGTH") },
      "trace-content": { type: "boolean", default: truthy(env.FORGE_TRACE_CONTENT) },
      "max-retries": { type: "string", ...str("FORGE_MAX_RETRIES") },
      "max-tool-errors": { type: "string", ...str("FORGE_MAX_TOOL_ERRORS") },
      "no-rescue": { type: "boolean", default: truthy(env.FORGE_NO_RESCUE) },
      "inject-respond-tool": { type: "boolean", default: truthy(env.FORGE_INJECT_RESPOND_TOOL) },
      policy: { type: "string", ...str("FORGE_POLICY") },
      workers: { type: "string", ...str("FORGE_WORKERS") },
      "drain-timeout": { type: "string", ...str("FORGE_DRAIN_TIMEOUT") },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(PROXY_HELP);
    return 0;
  }
  if (values.config !== undefined) {
    // Flags only: a FORGE_BACKEND left in the environment does not make a config file unusable.
    const given = new Set(tokens.flatMap((t) => (t.kind === "option" ? [t.name] : [])));
    const clash = BACKEND_FLAGS.filter((flag) => given.has(flag));
    if (clash.length > 0) throw new InvalidArgumentError("--config", `cannot be combined with --${clash.join(", --")}: the config file defines the backends`);
  }
  if (values["forward-auth"] && values["api-key"]) {
    throw new InvalidArgumentError("--forward-auth", "cannot be combined with --api-key: both read the caller's Authorization / x-api-key header");
  }
  // Said once, by the primary of a set of workers: each worker reads the same flags.
  if (!isLoopbackHost(values.host) && !values["api-key"] && !isProxyWorker()) {
    console.error(`forge-ts proxy: warning: --host ${values.host} without --api-key: anyone who can reach this port can use the backend through the proxy`);
  }
  const port = int("port", values.port, 0)!;
  if (port > 65_535) throw new InvalidArgumentError("--port", `expected 0..65535, got ${port}`);
  const maxRetries = int("max-retries", values["max-retries"], 0);
  const maxToolErrors = int("max-tool-errors", values["max-tool-errors"], 0);
  const bodyLimitBytes = int("body-limit", values["body-limit"], 1);
  const keepAliveMs = int("keep-alive-ms", values["keep-alive-ms"], 1);
  const contextLength = int("context-length", values["context-length"], 1);
  const maxConnections = int("max-connections", values["max-connections"], 1);
  const loaded = values.policy === undefined ? undefined : await loadPolicy(values.policy);
  const policy = loaded?.policy;
  const workers = workersOf(values.workers);
  const drainMs = int("drain-timeout", values["drain-timeout"], 0) ?? DEFAULT_DRAIN_MS;
  const serving = {
    ...(loaded === undefined ? {} : { policy: loaded.input }),
    forwardAuth: values["forward-auth"],
    rescueEnabled: !values["no-rescue"],
    injectRespondTool: values["inject-respond-tool"],
    traceContent: values["trace-content"],
    ...(values["api-key"] ? { apiKey: values["api-key"] } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(maxToolErrors !== undefined ? { maxToolErrors } : {}),
    ...(bodyLimitBytes !== undefined ? { bodyLimitBytes } : {}),
    ...(keepAliveMs !== undefined ? { keepAliveMs } : {}),
    ...(contextLength !== undefined ? { contextLength } : {}),
    ...(maxConnections !== undefined ? { maxConnections } : {}),
    ...(values["cors-origin"].length > 0 ? { corsOrigins: values["cors-origin"] } : {}),
  };
  /**
   * Serve, once every flag was checked: with --workers, the primary forks the workers here (a bad
   * flag was one line and exit 2 before any started) and serves nothing itself.
   */
  const launch = (make: (options: typeof serving & Pick<ProxyOptions, "metrics" | "views">) => ProxyServer, report: (proxy: ProxyServer) => Promise<void>): Promise<number> => {
    if (workers > 1 && !isProxyWorker()) return runPrimary(workers, signals);
    // The process's own metrics (CPU, memory, event-loop lag) too: this process is the proxy.
    const metrics = createForgeMetrics();
    const views = isProxyWorker() ? workerViews(metrics.registry) : undefined;
    const proxy = make({ ...serving, metrics, ...(views ? { views } : {}) });
    const shutdown: Shutdown = { drainMs, onListening: (p) => views?.serving(p) };
    return serve(proxy, port, values.host, values["api-key"] !== undefined, policy, signals, shutdown, () => report(proxy));
  };
  if (values.config !== undefined) {
    let config: ResolvedProxyConfig;
    try {
      config = await loadProxyConfig(values.config);
    } catch (error) {
      if (!ProxyConfigError.isInstance(error)) throw error;
      console.error(errorLine(error));
      return 2;
    }
    for (const [name, def] of Object.entries(config.backends)) {
      const url = def.baseUrl ?? DEFAULT_BASE_URLS[def.backend];
      if (url !== undefined) refuseSelfLoop(url, values.host, port, `backend ${name}'s baseUrl`);
    }
    return launch((options) => createProxy({ config, ...options }), (proxy) => reportFleet(proxy, config));
  }
  if (values.backend === undefined) throw new InvalidArgumentError("--backend", "is required (or FORGE_BACKEND), or give --config");
  const backend = values.backend;
  assertBackend(backend);
  if (backend === "sim") throw new InvalidArgumentError("--backend", "the proxy needs a real backend: ollama, llamaserver, llamafile, openai or anthropic");
  if (values.model === undefined) throw new InvalidArgumentError("--model", "is required (or FORGE_MODEL)");
  if (values.think !== undefined && !["true", "false"].includes(values.think)) throw new InvalidArgumentError("--think", `use true or false, not "${values.think}"`);
  const backendKey = values["backend-api-key"] ?? backendKeyFromEnv(backend, env);
  const baseUrl = values["base-url"] ?? DEFAULT_BASE_URLS[backend];
  const timeoutMs = int("timeout", values.timeout, 1);
  const client = buildClient({
    backend,
    model: values.model,
    ...(values["base-url"] ? { baseUrl: values["base-url"] } : {}),
    ...(values.mode ? { mode: values.mode } : {}),
    ...(values.think ? { think: values.think === "true" } : {}),
    ...(backendKey ? { apiKey: backendKey } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    apiKeyFlag: "--backend-api-key",
    keyFromCaller: values["forward-auth"],
    recommendedSampling: values["recommended-sampling"],
  });
  if (baseUrl !== undefined) refuseSelfLoop(baseUrl, values.host, port, values["base-url"] === undefined ? `--base-url (default ${baseUrl})` : "--base-url");
  const mode = backend === "llamaserver" || backend === "llamafile" ? ` mode ${values.mode ?? "auto"}${(values.mode ?? "auto") === "auto" ? " (native tools first; falls back to prompt mode once if the server refuses them, and logs it)" : ""}` : "";
  return launch((options) => createProxy({ client, model: values.model!, forwardModel: !values["pin-model"], ...options }), async () => {
    console.log(`  backend: ${backend} ${values.model}${baseUrl ? ` at ${redactUrl(baseUrl)}` : ""}${mode}`);
    await reportBackend(client, values.model!);
  });
}

/** A policy file, checked before anything listens: a mistake is a bad flag (exit 2). */
async function loadPolicy(path: string): Promise<{ input: ProxyPolicyInput; policy: ProxyPolicy }> {
  const value = jsonFileFlag("--policy", path);
  return { input: value as ProxyPolicyInput, policy: parsePolicy(value, `--policy ${path}`) };
}

/** The flags a config file replaces. */
const BACKEND_FLAGS = ["backend", "model", "base-url", "mode", "think", "backend-api-key", "timeout", "pin-model", "recommended-sampling"] as const;

/** Listen, print where, report the backends, and serve until SIGINT/SIGTERM. */
async function serve(
  proxy: ProxyServer,
  port: number,
  host: string,
  keyed: boolean,
  policy: ProxyPolicy | undefined,
  signals: NodeJS.EventEmitter,
  shutdown: Shutdown,
  report: () => Promise<void>,
): Promise<number> {
  let address: { url: string };
  try {
    address = await proxy.listen({ port, host });
  } catch (error) {
    const taken = (error as { code?: unknown }).code === "EADDRINUSE" && port === OLLAMA_PORT;
    const hint = taken ? ` (is Ollama itself listening there? Move it, e.g. OLLAMA_HOST=127.0.0.1:11435 ollama serve, and give the proxy --base-url http://127.0.0.1:11435)` : "";
    console.error(`forge-ts proxy: cannot listen on ${host}:${port}: ${(error as Error).message}${hint}`);
    return 1;
  }
  shutdown.onListening(proxy);
  // Of a set of workers, the first prints the start-up lines; they would only repeat them.
  if (!isQuietWorker()) {
    console.log(`forge-ts proxy listening on ${address.url}`);
    console.log(`  OpenAI harnesses:    base URL ${address.url}/v1${keyed ? "  (API key: the one given with --api-key)" : ""}`);
    console.log(`  Anthropic harnesses: ANTHROPIC_BASE_URL=${address.url}`);
    console.log(`  Ollama clients:      host ${address.url} (ollama-js host, ChatOllama baseUrl; OLLAMA_HOST=${address.url} for the Python library and CLI)${keyed ? "  (API key: the client's headers, Authorization: Bearer <key>)" : ""}`);
    console.log(`  Prometheus:          ${address.url}/metrics${keyed ? "  (bearer token: the --api-key)" : ""}`);
    if (policy) console.log(`  policy: ${describePolicy(policy)}`);
    await report();
    await reportWindow(proxy);
  }

  await new Promise<void>((resolve) => {
    const stop = (name: string) => {
      if (!isProxyWorker()) console.log(`forge-ts proxy: ${name}, draining (requests in flight finish, for up to ${shutdown.drainMs} ms; new ones get 503)`);
      resolve();
    };
    signals.once("SIGINT", () => stop("SIGINT"));
    signals.once("SIGTERM", () => stop("SIGTERM"));
  });
  await proxy.drain(shutdown.drainMs);
  return 0;
}

/** How the proxy stops: the drain's deadline, and what a worker tells its primary once it listens. */
interface Shutdown {
  drainMs: number;
  onListening(proxy: ProxyServer): void;
}

/** Default --drain-timeout: long enough for a long answer's stream to end. */
const DEFAULT_DRAIN_MS = 30_000;

/** --workers: a count, or `auto` for every core. */
function workersOf(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (raw === "auto") return availableParallelism();
  const n = int("workers", raw, 1)!;
  if (n > 1024) throw new InvalidArgumentError("--workers", `expected at most 1024, got ${n}`);
  return n;
}

/** Ollama's own port: clients that hard-code it reach the proxy there. */
const OLLAMA_PORT = 11434;

/**
 * A backend URL that is the proxy's own address would send every request back to the proxy
 * (`--port 11434` with Ollama's default base URL): refused before anything listens.
 */
function refuseSelfLoop(baseUrl: string, host: string, port: number, what: string): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return; // the client's own check names a malformed URL
  }
  const backendPort = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const sameHost = url.hostname === host || (isLoopbackHost(url.hostname.replace(/^\[|\]$/g, "")) && (isLoopbackHost(host) || host === "0.0.0.0" || host === "::"));
  if (port !== 0 && backendPort === port && sameHost) {
    throw new InvalidArgumentError(what, `${baseUrl} is this proxy's own address (--port ${port}): requests would come back to the proxy. Run the backend on another port (Ollama: OLLAMA_HOST=127.0.0.1:11435 ollama serve) and give that URL`);
  }
}

/**
 * The window the proxy enforces, and the Codex setting that matches it: Codex never asks for
 * the window and stops at the first context-length error unless its config names it.
 */
async function reportWindow(proxy: ProxyServer): Promise<void> {
  let window: number | undefined;
  try {
    window = await proxy.contextWindow();
  } catch {
    return; // said already: the backend is not reachable yet
  }
  if (window === undefined) {
    console.log("  window: unknown (the backend does not say; give --context-length to check prompts against one)");
    return;
  }
  console.log(`  window: ${window} tokens; a longer prompt gets the caller's API's context-length error (400). Ollama clients read it from /api/show`);
  console.log(`  Codex:  model_context_window = ${window} in ~/.codex/config.toml (it compacts before the window instead of stopping at the 400)`);
}

/**
 * One line per backend of a fleet with its health (a down one is a warning: it may come up
 * later, and requests go to the others meanwhile), and one per model with where it goes.
 */
async function reportFleet(proxy: ProxyServer, config: ResolvedProxyConfig): Promise<void> {
  const { backends } = await proxy.health();
  for (const b of backends) {
    const def = config.backends[b.name]!;
    const url = def.baseUrl ?? DEFAULT_BASE_URLS[def.backend];
    const limit = b.maxConcurrent === null ? "no limit" : `${b.maxConcurrent} at once`;
    const line = `  backend ${b.name}: ${def.backend} ${def.model}${url ? ` at ${redactUrl(url)}` : ""}, ${limit}: ${b.up ? "up" : `DOWN (${b.lastError ?? "no answer"})`}`;
    if (b.up) console.log(line);
    else console.warn(line);
  }
  for (const [name, m] of Object.entries(config.models)) {
    console.log(`  model ${name}${m.aliases.length > 0 ? ` (aliases: ${m.aliases.join(", ")})` : ""} → ${m.backends.join(", ")}`);
  }
}

/**
 * One line on whether the backend answers (its model list). An unreachable backend is a
 * warning, not a refusal to start: the proxy may well come up before the model server.
 */
async function reportBackend(client: ReturnType<typeof buildClient>, model: string): Promise<void> {
  if (!client.listModels) return;
  try {
    const models = await client.listModels({ signal: AbortSignal.timeout(5_000) });
    const known = models.some((m) => m.id === model);
    console.log(`  backend reachable: ${models.length} model(s)${known ? "" : `; "${model}" is not among them`}`);
  } catch (error) {
    console.warn(`  warning: backend not reachable yet (${(error as Error).message}); requests get 502 until it is`);
  }
}
