/**
 * Requests waiting for a backend slot, first come first served. Nothing polls: the owner calls
 * `drain()` when a slot frees (or a backend comes back), and each waiter, in order, tries to
 * take what it needs. A waiter that cannot be served yet does not block the ones behind it
 * (they may want another model). Each waiter leaves on its own deadline or its request's abort.
 */

interface Waiter<T> {
  tryTake(): T | undefined;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/**
 * @example
 * const queue = new WaitQueue<Slot>();
 * const slot = tryTake() ?? (await queue.wait(tryTake, { signal, timeoutMs: 30_000, onTimeout: () => new Error("busy") }));
 * // ... and on every release:
 * queue.drain();
 */
export class WaitQueue<T> {
  readonly #waiters: Waiter<T>[] = [];

  get size(): number {
    return this.#waiters.length;
  }

  /**
   * Wait until `tryTake` returns something during a `drain()`. Rejects with `onTimeout()` after
   * `timeoutMs`, or with the signal's reason when it aborts. `front` puts the waiter ahead of
   * everyone (a request failing over has waited its turn already).
   */
  wait(tryTake: () => T | undefined, o: { signal: AbortSignal; timeoutMs: number; onTimeout: () => unknown; front?: boolean }): Promise<T> {
    o.signal.throwIfAborted();
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        o.signal.removeEventListener("abort", onAbort);
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
      };
      const waiter: Waiter<T> = {
        tryTake,
        resolve: (value) => (leave(), resolve(value)),
        reject: (error) => (leave(), reject(error)),
      };
      const onAbort = () => waiter.reject(o.signal.reason);
      const timer = setTimeout(() => waiter.reject(o.onTimeout()), o.timeoutMs);
      o.signal.addEventListener("abort", onAbort, { once: true });
      if (o.front) this.#waiters.unshift(waiter);
      else this.#waiters.push(waiter);
    });
  }

  /** Offer what is free to the waiters, oldest first. */
  drain(): void {
    for (const waiter of [...this.#waiters]) {
      const taken = waiter.tryTake();
      if (taken !== undefined) waiter.resolve(taken);
    }
  }
}
