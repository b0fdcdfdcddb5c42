/**
 * The proxy's backends and who gets which: each inference goes to the least busy backend that
 * serves the caller's model (ties round-robin), within each backend's `maxConcurrent` (a
 * llama-server's slots). When all are full the request waits in a bounded FIFO queue, woken
 * when a slot frees — beyond `maxWaiting` waiting, or after `maxWaitMs`, it is a
 * BackendBusyError (429 + Retry-After). A failure before anything reached the caller — no
 * connection, a 5xx, a stream that broke before its first delta — moves the request to the
 * next backend; one that could not connect is marked down and skipped while others are up,
 * until a probe (backend-health.ts) or a request finds it back.
 */
import { BackendBusyError, ForgeError, InvalidArgumentError } from "../../core/errors.js";
import type { LLMClient } from "../../core/llm.js";
import type { BackendHealth, BackendHealthEntry } from "./backend-health.js";
import { WaitQueue } from "./wait-queue.js";

export interface PoolBackend {
  /** Unique within the pool; `/health` reports it. */
  name: string;
  client: LLMClient;
  /** The model name sent to it; undefined sends the caller's (the single-client proxy). */
  model?: string | undefined;
  /** Credential sent with each request unless the caller's own is forwarded. */
  apiKey?: string | undefined;
  /** Requests at once (default unlimited). */
  maxConcurrent?: number | undefined;
  /** Its context window in tokens, when configured (else asked of the backend: backend-windows.ts). */
  contextLength?: number | undefined;
}

export interface BackendPoolOptions {
  backends: readonly PoolBackend[];
  /**
   * Caller model name or alias ("" for a request that names none) → backend names, in
   * preference order. Absent: every backend serves every name.
   */
  routes?: ReadonlyMap<string, readonly string[]> | undefined;
  /** Requests waiting for a slot at most (default 64) and for how long (default 30,000 ms). */
  queue?: { maxWaiting?: number | undefined; maxWaitMs?: number | undefined } | undefined;
  health: BackendHealth;
}

/** What one attempt gets: its backend, and how to say that output reached the caller. */
export interface PoolAttempt {
  backend: PoolBackend;
  /** From this call on, a failure is final: the caller has part of this backend's answer. */
  commit(): void;
}

interface Slot {
  backend: PoolBackend;
  inFlight: number;
  max: number;
}

/**
 * @example
 * const pool = new BackendPool({ backends: [{ name: "gpu0", client, maxConcurrent: 4 }], health });
 * const answer = await pool.run("qwen3:8b", signal, ({ backend }) => backend.client.send(wire, tools, { signal }));
 */
export class BackendPool {
  readonly health: BackendHealth;
  readonly #slots: Slot[];
  readonly #routes: Map<string, Slot[]> | undefined;
  readonly #queue = new WaitQueue<Slot>();
  readonly #maxWaiting: number;
  readonly #maxWaitMs: number;
  #turn = 0;
  /** How long a request holds a slot (moving average): what Retry-After suggests. */
  #holdMs = 1_000;

  constructor(o: BackendPoolOptions) {
    if (!Array.isArray(o.backends) || o.backends.length === 0) throw new InvalidArgumentError("backends", "the pool needs at least one backend");
    const byName = new Map<string, Slot>();
    for (const backend of o.backends) {
      const max = backend.maxConcurrent ?? Infinity;
      if (max !== Infinity && (!Number.isInteger(max) || max < 1)) throw new InvalidArgumentError(`maxConcurrent`, `backend "${backend.name}": must be a positive integer, got ${String(max)}`);
      if (byName.has(backend.name)) throw new InvalidArgumentError("backends", `two backends are named "${backend.name}"`);
      byName.set(backend.name, { backend, inFlight: 0, max });
    }
    this.#slots = [...byName.values()];
    this.#routes = o.routes && new Map([...o.routes].map(([model, names]) => [model, names.map((n) => slotNamed(byName, n, model))]));
    this.#maxWaiting = o.queue?.maxWaiting ?? 64;
    this.#maxWaitMs = o.queue?.maxWaitMs ?? 30_000;
    this.health = o.health;
    // A backend back up can take waiters; one gone down can hand its waiters to the others.
    this.health.onChange(() => this.#queue.drain());
  }

  /** Whether some backend serves `model` ("" = the default model). */
  serves(model: string): boolean {
    return this.#routes === undefined || this.#routes.has(model);
  }

  /** The backend a request for `model` would go to first when all are idle (the first up one); undefined when none serves it. */
  backendFor(model: string): PoolBackend | undefined {
    const candidates = this.#candidates(model);
    return (candidates.find((s) => this.health.isUp(s.backend.name)) ?? candidates[0])?.backend;
  }

  /** Every backend serving `model`, in preference order, up or not. */
  backendsFor(model: string): readonly PoolBackend[] {
    return this.#candidates(model).map((s) => s.backend);
  }

  get backends(): readonly PoolBackend[] {
    return this.#slots.map((s) => s.backend);
  }

  /** Requests waiting for a slot now. */
  get waiting(): number {
    return this.#queue.size;
  }

  /** Each backend's load, as `GET /health` reports it. */
  load(): Omit<BackendHealthEntry, "up" | "lastError">[] {
    return this.#slots.map((s) => ({ name: s.backend.name, model: s.backend.model, inFlight: s.inFlight, maxConcurrent: s.max === Infinity ? null : s.max }));
  }

  /**
   * Run `attempt` on a backend serving `model`, failing over to the next on a failure no caller
   * has seen; backends named in `skip` are never tried (the prompt does not fit their window).
   * Rejects with the attempt's error, a BackendBusyError, or the signal's reason.
   */
  async run<T>(model: string, signal: AbortSignal, attempt: (a: PoolAttempt) => Promise<T>, options: { skip?: Iterable<string> } = {}): Promise<T> {
    const tried = new Set<string>(options.skip);
    // Made only when thrown: an error's stack costs more than the rest of a routed request.
    let failure: unknown;
    for (;;) {
      const slot = await this.#acquire(model, signal, tried);
      if (slot === undefined) throw failure ?? new InvalidArgumentError("model", `no backend serves "${model}"`);
      const { name } = slot.backend;
      tried.add(name);
      let committed = false;
      const started = performance.now();
      try {
        const value = await attempt({ backend: slot.backend, commit: () => void (committed = true) });
        this.health.markUp(name);
        return value;
      } catch (error) {
        if (signal.aborted) throw error;
        if (isUnreachable(error)) this.health.markDown(name, (error as Error).message);
        if (committed || !isFailover(error)) throw error;
        failure = error;
      } finally {
        this.#release(slot, performance.now() - started);
      }
    }
  }

  /** A slot on an untried backend serving `model`, now or after waiting; undefined when none is left to try. */
  async #acquire(model: string, signal: AbortSignal, tried: ReadonlySet<string>): Promise<Slot | undefined> {
    signal.throwIfAborted();
    if (!this.#candidates(model).some((s) => !tried.has(s.backend.name))) return undefined;
    const take = () => this.#take(model, tried);
    const now = take();
    if (now) return now;
    const failingOver = tried.size > 0;
    if (!failingOver && this.#queue.size >= this.#maxWaiting) throw this.#busy(model, "queue_full");
    return this.#queue.wait(take, { signal, timeoutMs: this.#maxWaitMs, onTimeout: () => this.#busy(model, "wait_timeout"), front: failingOver });
  }

  /** Take a slot on the least busy untried backend serving `model`: up ones first, down ones only when none is up. */
  #take(model: string, tried: ReadonlySet<string>): Slot | undefined {
    const candidates = this.#candidates(model).filter((s) => !tried.has(s.backend.name));
    const up = candidates.filter((s) => this.health.isUp(s.backend.name));
    for (const s of candidates) if (!up.includes(s)) this.health.recheck(s.backend.name);
    const usable = up.length > 0 ? up : candidates;
    const start = this.#turn++;
    let best: Slot | undefined;
    for (let i = 0; i < usable.length; i++) {
      const s = usable[(start + i) % usable.length]!;
      if (s.inFlight < s.max && (best === undefined || s.inFlight < best.inFlight)) best = s;
    }
    if (best) best.inFlight++;
    return best;
  }

  #release(slot: Slot, heldMs: number): void {
    slot.inFlight--;
    this.#holdMs = 0.8 * this.#holdMs + 0.2 * heldMs;
    this.#queue.drain();
  }

  #candidates(model: string): Slot[] {
    return this.#routes === undefined ? this.#slots : (this.#routes.get(model) ?? []);
  }

  /** About one request's time on this fleet, at least 1 s and at most the queue's wait. */
  #busy(model: string, reason: "queue_full" | "wait_timeout"): BackendBusyError {
    const retryAfterMs = Math.round(Math.min(Math.max(this.#holdMs, 1_000), Math.max(this.#maxWaitMs, 1_000)));
    return new BackendBusyError(model, reason, retryAfterMs);
  }
}

function slotNamed(byName: ReadonlyMap<string, Slot>, name: string, model: string): Slot {
  const slot = byName.get(name);
  if (!slot) throw new InvalidArgumentError("routes", `model "${model}" names backend "${name}", which is not in the pool`);
  return slot;
}

const statusOf = (error: unknown): number | undefined => {
  const status = ForgeError.isInstance(error) ? (error as { statusCode?: unknown }).statusCode : undefined;
  return typeof status === "number" ? status : undefined;
};

/** No connection, or it was lost (BackendError 0). */
const isUnreachable = (error: unknown): boolean => statusOf(error) === 0;

/**
 * Worth another backend when no caller saw any of it: unreachable, a 5xx, or a stream that broke
 * (twice: the client re-requests once itself). Not a stall (408: another would cost the same
 * wait again), not a refusal of the request itself (4xx), not a busy pool.
 */
const isFailover = (error: unknown): boolean => {
  const status = statusOf(error);
  return status === 0 || (status !== undefined && status >= 500) || (ForgeError.isInstance(error) && error.code === "FORGE_STREAM");
};
