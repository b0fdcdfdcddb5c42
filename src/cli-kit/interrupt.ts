/**
 * Ctrl-C for the commands that run work (demo, run, eval, eval-batch): the first SIGINT aborts
 * the work's AbortSignal, so the run is cancelled through the statechart and its store records
 * that (a process that just exits leaves the run "active" with nobody driving it); the command
 * then says how to go on and exits 130. A second SIGINT exits at once, for a run that hangs.
 */
import { resumeCommand, type HintFlags } from "./resume-command.js";

/** The shell's exit code for a process ended by SIGINT (128 + 2). */
export const INTERRUPTED_EXIT = 130;

export interface Interrupt {
  signal: AbortSignal;
  readonly interrupted: boolean;
  /** Stop listening for SIGINT (the default, exit, applies again). */
  dispose(): void;
}

/** @example const interrupt = onInterrupt(); await runner.run(w, msg, { signal: interrupt.signal }); */
export function onInterrupt(signals: NodeJS.EventEmitter = process, exit: (code: number) => void = (code) => process.exit(code)): Interrupt {
  const controller = new AbortController();
  const handler = () => {
    if (controller.signal.aborted) return exit(INTERRUPTED_EXIT);
    process.stderr.write("\ninterrupted (Ctrl-C): stopping; Ctrl-C again to quit at once\n");
    controller.abort(new Error("interrupted (SIGINT)"));
  };
  signals.on("SIGINT", handler);
  return {
    signal: controller.signal,
    get interrupted() {
      return controller.signal.aborted;
    },
    dispose: () => void signals.off("SIGINT", handler),
  };
}

/**
 * What an interrupted run prints: the command that continues it from its store. The runner
 * records a cancelled run, which `runs retry` runs again from its last state before the cancel.
 */
export function interruptedLines(runId: string, hints: HintFlags | undefined): string[] {
  if (!hints) return [`run ${runId} interrupted; it was not recorded (no --store): give --store <dir|url> to be able to continue an interrupted run`];
  return [`run ${runId} interrupted and checkpointed; continue it with:`, `  ${resumeCommand(runId, hints, "retry")}`];
}
