/**
 * MCP progress notifications from a run's state changes, for a caller that asked for them (a
 * `progressToken` in the request's `_meta`): one per state entered, numbered, with the state and
 * the model calls so far as the message. Sent in order and never failing the run (a client that
 * went away only loses its progress); `flush()` before the result, since progress that arrives
 * after it is dropped by the client.
 */
import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { WorkflowContext } from "../loop/context.js";

export interface RunProgress {
  /** For `WorkflowRunnerOptions.onStateChange`; undefined when the caller asked for no progress. */
  onStateChange: ((state: string, context: Readonly<WorkflowContext>) => void) | undefined;
  /** Resolves once every notification sent so far is written (or failed). */
  flush(): Promise<void>;
}

/**
 * @example
 * const progress = runProgress(extra._meta?.progressToken, extra.sendNotification);
 * new WorkflowRunner({ ..., onStateChange: progress.onStateChange });
 */
export function runProgress(token: ProgressToken | undefined, send: (notification: ServerNotification) => Promise<void>): RunProgress {
  let sending: Promise<void> = Promise.resolve();
  if (token === undefined) return { onStateChange: undefined, flush: () => sending };
  let progress = 0;
  return {
    onStateChange(state, context) {
      progress += 1;
      const notification: ServerNotification = {
        method: "notifications/progress",
        params: { progressToken: token, progress, message: `${state} (model calls: ${context.iteration})` },
      };
      sending = sending.then(() => send(notification)).catch(() => undefined);
    },
    flush: () => sending,
  };
}
