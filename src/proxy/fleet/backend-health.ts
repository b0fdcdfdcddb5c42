/**
 * Whether each backend of the proxy answers. Two sources keep it current: probes (the
 * backend's model list, or a GET of its base URL when the client cannot list models), run at
 * most every `intervalMs` per backend and only when someone asks (`GET /health`, or the pool
 * skipping a backend it believes down) — no timer runs while nobody asks; and the pool's own
 * requests (one that could not connect marks its backend down, one that succeeded marks it up).
 */
import { redactText } from "../../core/redact.js";
import { httpCall, isBackendError } from "../../clients/http.js";
import type { LLMClient } from "../../core/llm.js";

export interface HealthOptions {
  /** A backend is probed again once its state is this old (ms). */
  intervalMs: number;
  /** One probe's deadline (ms); no answer by then is "down". */
  timeoutMs: number;
}

/** One backend as `GET /health` reports it. */
export interface BackendHealthEntry {
  name: string;
  up: boolean;
  /** The model name sent to it (undefined: the caller's, for a single-client proxy). */
  model: string | undefined;
  inFlight: number;
  /** null: unlimited. */
  maxConcurrent: number | null;
  lastError?: string;
}

export interface HealthReport {
  /** ok: every backend up; degraded: some down; down: all down. */
  status: "ok" | "degraded" | "down";
  backends: BackendHealthEntry[];
}

interface Entry {
  client: LLMClient;
  up: boolean;
  lastError: string | undefined;
  /** performance.now() of the last probe result or request outcome; -Infinity before any. */
  checkedAt: number;
  probing: Promise<void> | undefined;
}

/**
 * @example
 * const health = new BackendHealth([{ name: "gpu0", client }], { intervalMs: 5_000, timeoutMs: 2_000 });
 * await health.refresh();
 * health.isUp("gpu0"); // false when its server does not answer
 */
export class BackendHealth {
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<() => void>();
  readonly #closed = new AbortController();

  constructor(
    backends: readonly { name: string; client: LLMClient }[],
    readonly options: HealthOptions,
  ) {
    // Unknown counts as up: a request is the quickest probe, and the proxy may start before its backends.
    for (const { name, client } of backends) this.#entries.set(name, { client, up: true, lastError: undefined, checkedAt: -Infinity, probing: undefined });
  }

  isUp(name: string): boolean {
    return this.#entry(name).up;
  }

  lastError(name: string): string | undefined {
    return this.#entry(name).lastError;
  }

  /** A request to it succeeded. */
  markUp(name: string): void {
    this.#set(this.#entry(name), undefined);
  }

  /** A request to it could not connect (or lost its connection). */
  markDown(name: string, reason: string): void {
    this.#set(this.#entry(name), reason);
  }

  /** `listener` runs whenever a backend goes up or down; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Probe `name` in the background when its state is older than `intervalMs` (a down backend skipped by the pool). */
  recheck(name: string): void {
    const entry = this.#entry(name);
    if (this.#stale(entry)) void this.#probe(entry);
  }

  /** Probe every backend whose state is stale, and wait for all probes under way. */
  async refresh(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((entry) => (this.#stale(entry) ? this.#probe(entry) : entry.probing)));
  }

  /**
   * Fresh health (probing what is stale) joined with each backend's load.
   *
   * @example
   * const report = await health.report(pool.load());
   * const status = report.status === "ok" ? 200 : 503;
   */
  async report(load: readonly Omit<BackendHealthEntry, "up" | "lastError">[]): Promise<HealthReport> {
    await this.refresh();
    const backends = load.map((b): BackendHealthEntry => {
      const entry = this.#entry(b.name);
      return { ...b, up: entry.up, ...(entry.lastError !== undefined && !entry.up ? { lastError: entry.lastError } : {}) };
    });
    const down = backends.filter((b) => !b.up).length;
    return { status: down === 0 ? "ok" : down === backends.length ? "down" : "degraded", backends };
  }

  /** Abort probes under way (proxy shutdown). */
  close(): void {
    this.#closed.abort("proxy shutting down");
  }

  #entry(name: string): Entry {
    const entry = this.#entries.get(name);
    if (!entry) throw new Error(`BackendHealth: no backend named "${name}"`);
    return entry;
  }

  #stale(entry: Entry): boolean {
    return entry.probing === undefined && performance.now() - entry.checkedAt >= this.options.intervalMs && !this.#closed.signal.aborted;
  }

  #set(entry: Entry, error: string | undefined): void {
    const changed = entry.up !== (error === undefined);
    entry.up = error === undefined;
    entry.lastError = error === undefined ? entry.lastError : redactText(error);
    entry.checkedAt = performance.now();
    if (changed) for (const listener of this.#listeners) listener();
  }

  #probe(entry: Entry): Promise<void> {
    const started = performance.now();
    entry.probing = probeBackend(entry.client, this.options.timeoutMs, this.#closed.signal).then((error) => {
      entry.probing = undefined;
      // A request's outcome seen while the probe was out is newer news than the probe.
      if (entry.checkedAt <= started && !this.#closed.signal.aborted) this.#set(entry, error);
    });
    return entry.probing;
  }
}

/**
 * One probe: undefined when the backend answers, else why not. Any HTTP answer below 500 counts
 * as up (a server without a model list, or one that wants another credential, is still there);
 * no connection, a 5xx (llama-server while loading its model) or no answer in time is down.
 *
 * @example
 * await probeBackend(new OllamaClient({ model: "qwen3:8b" }), 2_000); // undefined, or "No usable HTTP answer from ..."
 */
export async function probeBackend(client: LLMClient, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    if (client.listModels) {
      await client.listModels({ signal: both });
    } else {
      const baseUrl = (client as { baseUrl?: unknown }).baseUrl;
      if (typeof baseUrl !== "string") return undefined; // nothing to ask: requests will tell
      (await httpCall(baseUrl, { method: "GET", timeoutMs, signal: both })).discard();
    }
    return undefined;
  } catch (error) {
    if (timeout.aborted) return `no answer to a health probe within ${timeoutMs} ms`;
    if (isBackendError(error) && error.statusCode >= 400 && error.statusCode < 500 && error.statusCode !== 408) return undefined;
    return error instanceof Error ? error.message : String(error);
  }
}
