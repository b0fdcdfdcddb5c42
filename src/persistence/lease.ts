/**
 * A run's lease as a runner holds it, the same for every store: the store takes it (with a fencing
 * token) and says how to renew and release it; this keeps it alive in the background and knows,
 * by this process's own monotonic clock, whether it may still be ours.
 *
 * Why a local clock: the store decides expiry on its own clock, which this process cannot read.
 * A renewal that the store confirmed extends the lease to at least `leaseMs` after the moment it
 * was sent, so "sent + leaseMs" is a bound this process can check without trusting any other
 * clock. A process paused past that bound (SIGSTOP, a GC or VM pause) finds out on resuming,
 * before it starts a tool, instead of acting on a lease someone else may hold by now.
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { RunLockLostError, StoreError } from "../core/errors.js";
import type { RunLease } from "./run-store.js";

export interface LeaseOps {
  /** Extend the lease by leaseMs on the store's clock; RunLockLostError when a newer holder exists. */
  renew(): Promise<void>;
  /** Let the next holder in at once (the fencing token stays, so the next one is higher). */
  release(): Promise<void>;
}

/** A holder id: which host and process, plus a random part (pids repeat across hosts and restarts). */
export function newHolderId(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

export class Lease implements RunLease {
  readonly takenOver: boolean;
  readonly #ops: LeaseOps;
  readonly #leaseMs: number;
  readonly #location: string;
  /** performance.now() when the last confirmed acquisition or renewal was sent. */
  #confirmedAt: number;
  #lost: StoreError | undefined;
  #released = false;
  #renewing = false;
  #handlers: ((error: StoreError) => void)[] = [];
  readonly #timer: ReturnType<typeof setInterval> | undefined;

  /** `sentAt`: performance.now() taken before the request that acquired the lease was sent. */
  constructor(
    readonly runId: string,
    readonly fence: number,
    readonly holder: string,
    options: { leaseMs: number; location: string; sentAt: number; ops: LeaseOps; autoRenew?: boolean | undefined; takenOver?: boolean | undefined },
  ) {
    this.takenOver = options.takenOver ?? false;
    this.#ops = options.ops;
    this.#leaseMs = options.leaseMs;
    this.#location = options.location;
    this.#confirmedAt = options.sentAt;
    // Three renewals per lease period: one slow or failed renewal does not lose the lease.
    // autoRenew false: nobody renews it (what a paused holder looks like; tests use it).
    if (options.autoRenew !== false) {
      this.#timer = setInterval(() => void this.#renew(), Math.max(10, Math.floor(options.leaseMs / 3)));
      this.#timer.unref?.();
    }
  }

  assertHeld(): void {
    if (this.#lost) throw this.#lost;
    if (this.#released) throw new RunLockLostError(this.runId, this.#location, this.fence, "released");
    const age = performance.now() - this.#confirmedAt;
    if (age >= this.#leaseMs) this.#lose(new RunLockLostError(this.runId, this.#location, this.fence, `not renewed for ${Math.round(age)} ms, past the ${this.#leaseMs} ms lease`));
    if (this.#lost) throw this.#lost;
  }

  onLost(handler: (error: StoreError) => void): void {
    if (this.#lost) handler(this.#lost);
    else this.#handlers.push(handler);
  }

  /** Renew now (the background renewal does this every third of the lease). */
  async renew(): Promise<void> {
    this.assertHeld();
    const sentAt = performance.now();
    try {
      await this.#ops.renew();
    } catch (error) {
      if (error instanceof RunLockLostError) this.#lose(error);
      throw error;
    }
    this.#confirmedAt = Math.max(this.#confirmedAt, sentAt);
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#timer);
    if (this.#lost) return; // someone else holds it: nothing of ours to release
    await this.#ops.release();
  }

  async #renew(): Promise<void> {
    if (this.#renewing || this.#released || this.#lost) return;
    this.#renewing = true;
    const sentAt = performance.now();
    try {
      await this.#ops.renew();
      if (!this.#lost) this.#confirmedAt = Math.max(this.#confirmedAt, sentAt);
    } catch (error) {
      if (error instanceof RunLockLostError) this.#lose(error);
      // Anything else (the store unreachable): try again next tick, until the lease runs out.
      else if (performance.now() - this.#confirmedAt >= this.#leaseMs) {
        this.#lose(new RunLockLostError(this.runId, this.#location, this.fence, `could not renew within the ${this.#leaseMs} ms lease: ${(error as Error)?.message ?? String(error)}`));
      }
    } finally {
      this.#renewing = false;
    }
  }

  #lose(error: StoreError): void {
    if (this.#lost) return;
    this.#lost = error;
    clearInterval(this.#timer);
    for (const handler of this.#handlers.splice(0)) handler(error);
  }
}
