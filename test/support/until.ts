/**
 * The one poller of the tests that wait on a condition (a process, a queue, a store, a log
 * file) rather than on a fixed sleep.
 */

/**
 * Polls `check` until it returns something truthy, and returns that (or throws after
 * `timeoutMs`). The deadline is generous: a loaded machine only makes a test slower, never red.
 * @example const pid = await until(() => readLog().find((e) => e.event === "end")?.pid);
 */
export async function until<T>(check: () => Promise<T> | T, timeoutMs = 60_000, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
