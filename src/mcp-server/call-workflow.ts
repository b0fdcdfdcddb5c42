/**
 * One MCP tool call: a durable run of the workflow on the task, on a runner of its own (a
 * WorkflowRunner runs one run at a time, and calls may overlap), ended as a tool result.
 */
import { randomUUID } from "node:crypto";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { PendingHumanRequest } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../runner.js";
import { doneResult, failedResult, waitingResult } from "./call-result.js";
import { runProgress } from "./run-progress.js";
import type { WorkflowToolArgs } from "./workflow-input.js";

export interface CallWorkflowOptions {
  /** The runner options of one call: a client of its own, the shared store, budgets. */
  runner: (workflow: Workflow) => WorkflowRunnerOptions;
  /** How a waiting run is told (e.g. with the `forge-ts runs approve ...` commands); default: one line per request. */
  waitingLines?: (workflow: Workflow, runId: string, requests: readonly PendingHumanRequest[]) => string[];
}

/** What a call uses of the SDK's request context: the client's cancel, its progress token, the way back. */
export type CallContext = Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, "signal" | "_meta" | "sendNotification">;

const defaultWaitingLines = (_workflow: Workflow, runId: string, requests: readonly PendingHumanRequest[]) => [
  `run ${runId} is waiting for a person (${requests.length} pending):`,
  ...requests.map((r) => `  ${r.callId}  ${r.tool}  ${r.kind}  ${JSON.stringify(r.args)}`),
];

/**
 * Run `workflow` on `args.task` until it is done, waits for a person, fails or the client cancels
 * (`context.signal` aborts the run: it ends cancelled in the store, and the SDK sends no reply).
 *
 * @example
 * server.registerTool(name, { inputSchema }, (args, extra) => callWorkflow(workflow, args, extra, { runner: () => ({ client, contextManager, store }) }));
 */
export async function callWorkflow(workflow: Workflow, args: WorkflowToolArgs, context: CallContext, options: CallWorkflowOptions): Promise<CallToolResult> {
  // Minted here rather than by the runner, so even a run that fails to start has an id to report.
  const runId = randomUUID();
  const progress = runProgress(context._meta?.progressToken, context.sendNotification);
  try {
    const base = options.runner(workflow);
    const onStateChange = progress.onStateChange;
    const runner = new WorkflowRunner(
      onStateChange
        ? { ...base, onStateChange: (state, ctx) => (base.onStateChange?.(state, ctx), onStateChange(state, ctx)) }
        : base,
    );
    const outcome = await runner.start(workflow, args.task, {
      runId,
      signal: context.signal,
      ...(args.sessionId !== undefined ? { sessionId: args.sessionId } : {}),
      ...(args.promptVars !== undefined ? { promptVars: args.promptVars } : {}),
    });
    await progress.flush();
    if (outcome.status === "done") return doneResult(runId, outcome.result);
    return waitingResult(runId, outcome.requests, (options.waitingLines ?? defaultWaitingLines)(workflow, runId, outcome.requests));
  } catch (error) {
    await progress.flush();
    return failedResult(runId, error);
  }
}
