/** User callbacks (onMessage, onStateChange, inspect, ...) called so that nothing they do escapes a run. */
import type { InspectionEvent } from "xstate";
import { CallbackError, type CallbackName } from "../core/errors.js";
import type { WorkflowRunnerOptions } from "./options.js";

/** The user's inspector behind the callback guard (XState would call it unprotected, mid-transition). */
export function guardedInspect(inspect: WorkflowRunnerOptions["inspect"], callbacks: CallbackGuard): { inspect?: (event: InspectionEvent) => void } {
  if (!inspect) return {};
  const deliver = typeof inspect === "function" ? inspect : (event: InspectionEvent) => inspect.next!(event);
  return { inspect: (event) => callbacks.call("inspect", deliver, event) };
}

/**
 * Calls user callbacks so that nothing they do escapes: a throw, or a promise they return that
 * rejects, becomes one CallbackError handed to the run (the first one wins). Promises still
 * pending are awaited before a finished run settles.
 */
export class CallbackGuard {
  readonly #pending = new Set<Promise<void>>();
  #failure: CallbackError | undefined;
  #onFailure: ((error: CallbackError) => void) | undefined;
  #closed = false;

  call<TArgs extends unknown[]>(name: CallbackName, fn: ((...args: TArgs) => unknown) | undefined, ...args: TArgs): void {
    if (!fn || this.#closed) return;
    let returned: unknown;
    try {
      returned = fn(...args);
    } catch (error) {
      return this.#fail(new CallbackError(name, error));
    }
    if (!isThenable(returned)) return;
    const watched = Promise.resolve(returned).then(
      () => undefined,
      (error: unknown) => this.#fail(new CallbackError(name, error)),
    );
    this.#pending.add(watched);
    void watched.then(() => this.#pending.delete(watched));
  }

  onFailure(handler: (error: CallbackError) => void): void {
    this.#onFailure = handler;
    if (this.#failure) handler(this.#failure);
  }

  /** Resolves once every callback promise so far has settled (at least one microtask from now). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** The run settled: later callbacks are not called (a failure could no longer be reported). */
  close(): void {
    this.#closed = true;
  }

  #fail(error: CallbackError): void {
    if (this.#failure || this.#closed) return;
    this.#failure = error;
    this.#onFailure?.(error);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return false;
  try {
    return typeof (value as { then?: unknown }).then === "function";
  } catch {
    return false; // a throwing `then` getter: not something to await
  }
}
