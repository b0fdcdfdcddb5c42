/**
 * Server processes are spawned detached (their own process group, so stop() can kill the
 * whole group including any workers). Detached children also escape the terminal's Ctrl-C,
 * so this registry kills every live group when the parent exits or is signalled.
 */
const liveGroups = new Set<number>();
let hooked = false;

function killAll(signal: NodeJS.Signals): void {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, signal);
    } catch {
      // The group is already gone: nothing left to clean up.
    }
  }
  liveGroups.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAll("SIGKILL");
  process.removeListener(signal, onSignal);
  // Only our handler was installed: re-raise so the default behaviour (exit) still happens.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function installHooks(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => killAll("SIGKILL"));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);
}

/**
 * Track a spawned process group for parent-exit cleanup.
 *
 * @example
 * registerChildGroup(child.pid!);
 */
export function registerChildGroup(pgid: number): void {
  installHooks();
  liveGroups.add(pgid);
}

/** Stop tracking a group that has exited. */
export function unregisterChildGroup(pgid: number): void {
  liveGroups.delete(pgid);
}
