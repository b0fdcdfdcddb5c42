/**
 * Each backend's context window, learned once per backend and model, and the judgement of one
 * request against the windows of the backends that may serve it: which of them the prompt fits,
 * and the `num_ctx` an Ollama backend is sent. The pure rules are in
 * src/proxy-request/context-window.ts; this module does the asking and remembering.
 *
 * Where a window comes from, first match wins: the backend's `contextLength` in the fleet config,
 * the proxy's `contextLength` option (`--context-length`), then the backend itself — Ollama's
 * /api/show (the model's trained maximum, which num_ctx is sized up to; an OllamaClient with its
 * own `numCtx` keeps it and is not sized), llama-server's /props `n_ctx`, an OpenAI-compatible
 * server's configured `contextLength` or /models `max_model_len`. A backend that cannot say is
 * logged once, with what the proxy does instead (no window check; Ollama's num_ctx still sized,
 * uncapped: Ollama clamps it to the model's maximum itself).
 */
import { OllamaClient } from "../clients/ollama.js";
import { isBackendError } from "../clients/http.js";
import { estimatePromptTokensChars4 } from "../context/token-estimator.js";
import { isPlainObject } from "../core/json-value.js";
import type { Message } from "../core/messages.js";
import type { ToolSpec } from "../core/tool.js";
import { serializeMessages } from "../core/wire-messages.js";
import { contextLengthError, needsExactCount, numCtxFor, promptFits, requestedOutputTokens } from "../proxy-request/context-window.js";
import { backendTokenCount } from "./count-tokens.js";
import type { BackendHealth } from "./fleet/backend-health.js";
import type { PoolBackend } from "./fleet/backend-pool.js";

export interface BackendWindow {
  /** Tokens a request's prompt may take; undefined: unknown, not checked. */
  contextLength: number | undefined;
  /** Ollama without a num_ctx of its own: each request is sent one that fits it. */
  sizesNumCtx: boolean;
}

export interface BackendWindowsOptions {
  /** The proxy-wide window (`contextLength` option): replaces what backends report. */
  contextLength?: number | undefined;
  /**
   * The pool's health: a backend that is down is not asked (a hung one would hold every request
   * up to the discovery timeout), and one that cannot be reached while asking is marked down.
   */
  health?: Pick<BackendHealth, "isUp" | "markDown"> | undefined;
  /** Where discovery problems are said (once per backend and model). Default console.warn. */
  warn?: ((message: string) => void) | undefined;
  /** Longest wait for a backend's answer about its window (default 10,000 ms). */
  discoveryTimeoutMs?: number | undefined;
}

/** One request as the window check sees it. */
export interface WindowRequest {
  /** The model name sent to each backend that has none configured (undefined: the client's own). */
  model: string | undefined;
  messages: readonly Message[];
  /** The tools the backend is sent. */
  tools: readonly ToolSpec[];
  /** The caller's pass-through fields (max_tokens, Ollama `options`). */
  body: Readonly<Record<string, unknown>>;
  apiKey?: string | undefined;
}

export interface Admission {
  /** Backends whose window the prompt does not fit: the pool does not try them. */
  skip: ReadonlySet<string>;
  /** The num_ctx to send `backend` for this request, remembered as its last (undefined: send none). */
  numCtx(backend: PoolBackend): number | undefined;
}

/** Remembered (backend, model) pairs at most: callers choose model names, so the maps are bounded. */
const MAX_ENTRIES = 512;

/**
 * @example
 * const windows = new BackendWindows({ contextLength: undefined, health: pool.health });
 * const admission = await windows.admit(pool.backendsFor(model), { model, messages, tools, body }, signal);
 * await pool.run(model, signal, ({ backend }) => send(backend, admission.numCtx(backend)), { skip: admission.skip });
 */
export class BackendWindows {
  readonly #override: number | undefined;
  readonly #health: Pick<BackendHealth, "isUp" | "markDown"> | undefined;
  readonly #warn: (message: string) => void;
  readonly #timeoutMs: number;
  readonly #known = new Map<string, BackendWindow>();
  readonly #asking = new Map<string, Promise<BackendWindow>>();
  readonly #lastNumCtx = new Map<string, number>();
  readonly #warned = new Set<string>();

  constructor(options: BackendWindowsOptions = {}) {
    this.#override = options.contextLength;
    this.#health = options.health;
    this.#warn = options.warn ?? ((message) => console.warn(message));
    this.#timeoutMs = options.discoveryTimeoutMs ?? 10_000;
  }

  /**
   * The window of `backend` for `model` (its configured model first): asked once and
   * remembered; asked again later only when the backend did not answer at all.
   */
  async windowOf(backend: PoolBackend, model: string | undefined): Promise<BackendWindow> {
    const name = backend.model ?? model;
    const key = keyOf(backend, name);
    const known = this.#known.get(key);
    if (known !== undefined) return known;
    let asking = this.#asking.get(key);
    if (asking === undefined) {
      asking = this.#discover(backend, name, key).finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    return asking;
  }

  /**
   * Judge one request against the windows of `candidates` (the backends serving its model). A
   * prompt that fits none is the caller's 400 in its API's own words (contextLengthError), with
   * the largest window: failing over between backends that all refuse it would only add waiting.
   */
  async admit(candidates: readonly PoolBackend[], request: WindowRequest, signal: AbortSignal): Promise<Admission> {
    const estimate = estimatePromptTokensChars4(request.messages, request.tools);
    const callerNumCtx = callerNumCtxOf(request.body);
    const judged = await Promise.all(
      candidates.map(async (backend) => {
        const window = await this.#windowIfUp(backend, request.model);
        const limit = window.sizesNumCtx && callerNumCtx !== undefined ? Math.min(callerNumCtx, window.contextLength ?? callerNumCtx) : window.contextLength;
        const tokens = needsExactCount(estimate, limit) ? await this.#exactCount(backend, request, signal, estimate) : estimate;
        return { backend, window, limit, tokens };
      }),
    );
    const refused = judged.filter((j) => !promptFits(j.tokens, j.limit));
    if (refused.length > 0 && refused.length === judged.length) {
      const widest = refused.reduce((a, b) => (b.limit! > a.limit! ? b : a));
      throw contextLengthError(widest.tokens, widest.limit!);
    }
    const byName = new Map(judged.map((j) => [j.backend.name, j]));
    const outputTokens = requestedOutputTokens(request.body);
    return {
      skip: new Set(refused.map((j) => j.backend.name)),
      numCtx: (backend) => {
        const j = byName.get(backend.name);
        if (!j || !j.window.sizesNumCtx || callerNumCtx !== undefined) return undefined;
        const key = keyOf(backend, backend.model ?? request.model);
        const numCtx = numCtxFor({ promptTokens: j.tokens, outputTokens, contextLength: j.window.contextLength, previous: this.#lastNumCtx.get(key) });
        remember(this.#lastNumCtx, key, numCtx);
        return numCtx;
      },
    };
  }

  /** A down backend is not asked: what is known of it or configured, else no window (the pool uses it only when nothing else is up). */
  async #windowIfUp(backend: PoolBackend, model: string | undefined): Promise<BackendWindow> {
    if (this.#health === undefined || this.#health.isUp(backend.name)) return this.windowOf(backend, model);
    const known = this.#known.get(keyOf(backend, backend.model ?? model));
    if (known !== undefined) return known;
    const local = await this.#withoutAsking(backend);
    return { contextLength: local.configured ?? local.fixed, sizesNumCtx: local.sizesNumCtx };
  }

  /** What is known of a backend's window without asking it: the configured value, an OllamaClient's own numCtx. */
  async #withoutAsking(backend: PoolBackend): Promise<{ configured: number | undefined; fixed: number | undefined; ollama: OllamaClient | undefined; sizesNumCtx: boolean }> {
    const ollama = backend.client instanceof OllamaClient ? backend.client : undefined;
    // An OllamaClient's own numCtx is sent with every request (getContextLength reports it, no I/O).
    const fixed = ollama ? await ollama.getContextLength() : undefined;
    return { configured: backend.contextLength ?? this.#override, fixed, ollama, sizesNumCtx: ollama !== undefined && fixed === undefined };
  }

  async #discover(backend: PoolBackend, model: string | undefined, key: string): Promise<BackendWindow> {
    const { client } = backend;
    const { configured, fixed, ollama, sizesNumCtx } = await this.#withoutAsking(backend);
    const settle = (contextLength: number | undefined): BackendWindow => {
      const window = { contextLength, sizesNumCtx };
      remember(this.#known, key, window);
      return window;
    };
    if (configured !== undefined) return settle(configured);
    if (fixed !== undefined) return settle(fixed);
    const what = `backend "${backend.name}"${model !== undefined ? ` model "${model}"` : ""}`;
    const instead = sizesNumCtx ? "prompts are not checked against a window, and num_ctx is sized without a cap" : "prompts are not checked against a window";
    const ask = { ...(model !== undefined ? { model } : {}), signal: AbortSignal.timeout(this.#timeoutMs) };
    let contextLength: number | undefined;
    try {
      contextLength = ollama ? await ollama.modelContextLength(ask) : await client.getContextLength(ask);
    } catch (error) {
      this.#warnOnce(key, `forge-ts proxy: cannot learn the context length of ${what} (${describe(error)}); ${instead}`);
      // No answer at all: not remembered, the next request asks again (unless the pool skips it while down).
      if (!isTransient(error)) return settle(undefined);
      if (isBackendError(error) && error.statusCode === 0) this.#health?.markDown(backend.name, error.message);
      return { contextLength: undefined, sizesNumCtx };
    }
    if (contextLength === undefined) {
      this.#warnOnce(key, `forge-ts proxy: ${what} does not report its context length; ${instead} (set contextLength in the config, or --context-length)`);
    }
    return settle(contextLength);
  }

  /** The backend tokenizer's count near the window, when it has one; else the estimate. */
  async #exactCount(backend: PoolBackend, request: WindowRequest, signal: AbortSignal, estimate: number): Promise<number> {
    const { client } = backend;
    if (typeof client.countTokens !== "function") return estimate;
    const wire = serializeMessages([...request.messages], client.apiFormat);
    const model = backend.model ?? request.model;
    const counted = await backendTokenCount(client, wire, [...request.tools], { signal, model, apiKey: request.apiKey ?? backend.apiKey });
    return counted.source === "backend" ? counted.tokens : estimate;
  }

  #warnOnce(key: string, message: string): void {
    if (this.#warned.has(key)) return;
    if (this.#warned.size >= MAX_ENTRIES) this.#warned.clear();
    this.#warned.add(key);
    this.#warn(message);
  }
}

function keyOf(backend: PoolBackend, model: string | undefined): string {
  return `${backend.name}\u0000${model ?? ""}`;
}

/** Set, dropping the oldest entry beyond MAX_ENTRIES. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
}

/** The caller's own Ollama `options.num_ctx` (the proxy then leaves num_ctx alone). */
function callerNumCtxOf(body: Readonly<Record<string, unknown>>): number | undefined {
  const value = isPlainObject(body.options) ? body.options.num_ctx : undefined;
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Unreachable, timed out or aborted: the backend may well answer next time. */
function isTransient(error: unknown): boolean {
  if (isBackendError(error)) return error.statusCode === 0 || error.statusCode === 408;
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

function describe(error: unknown): string {
  if (isBackendError(error) && error.statusCode >= 400) return `HTTP ${error.statusCode}: ${error.body.slice(0, 200)}`;
  return error instanceof Error ? error.message : String(error);
}
