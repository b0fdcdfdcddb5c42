/**
 * A running job's progress, `{ state, iteration }`, published as BullMQ job progress at most
 * once per `intervalMs` (the machine may change state many times a second): the latest value
 * wins, and the last one is sent when the run ends. Updates go out in order and never fail the
 * run (a Redis away only delays them).
 */
export interface RunProgress {
  /** The machine's state, as onStateChange names it (e.g. "infer", "executeTools", "done"). */
  state: string;
  /** LLM calls so far. */
  iteration: number;
}

export function throttledProgress(send: (progress: RunProgress) => Promise<unknown>, intervalMs = 250): { report(progress: RunProgress): void; close(): Promise<void> } {
  let lastSent = -Infinity;
  let pending: RunProgress | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sending: Promise<unknown> = Promise.resolve();
  const flush = () => {
    timer = undefined;
    if (!pending) return;
    const progress = pending;
    pending = undefined;
    lastSent = performance.now();
    sending = sending.then(() => send(progress)).catch(() => undefined);
  };
  return {
    report(progress) {
      pending = progress;
      if (timer) return;
      const wait = lastSent + intervalMs - performance.now();
      if (wait <= 0) flush();
      else timer = setTimeout(flush, wait);
    },
    async close() {
      clearTimeout(timer);
      flush();
      await sending;
    },
  };
}
