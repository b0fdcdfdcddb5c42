/**
 * forge-ts: reliable tool-calling loops for self-hosted LLMs.
 *
 * @example
 * import { WorkflowRunner, Workflow, defineTool, ContextManager, OllamaClient } from "forge-ts";
 */
export * from "./core/index.js";
export * from "./parsing/index.js";
export * from "./guardrails/index.js";
export * from "./context/index.js";
export { detectHardware, parseNvidiaSmi, type GpuInfo, type HardwareProfile } from "./context/hardware.js";
export * from "./clients/index.js";
export * from "./server/index.js";
export { respondTool, RESPOND_TOOL_NAME } from "./tools/respond.js";
export { workflowTool, type WorkflowToolOptions } from "./tools/workflow-tool.js";
export { childRunId, childRunsOf, parentLinkOf, type ChildRunInfo } from "./runner/child-links.js";
export { WorkflowRunner, MACHINE_VERSION, type WorkflowRunnerOptions, type RunOptions, type RunOutcome } from "./runner.js";
export { recordDecision, type DecisionInput, type DecisionReceipt } from "./runner/decisions.js";
export { forkRun, type ForkOptions, type ForkPatch, type ForkResult } from "./runner/fork.js";
export type { HumanDecision, HumanKind, HumanRequest } from "./loop/human.js";
export type { RunStats } from "./loop/run-stats.js";
export type { WorkflowContext, LoopBudget, LoopSwitches } from "./loop/context.js";
export { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE } from "./loop/context.js";
export { LLMResponseSchema, assertLLMResponse } from "./core/response-contract.js";
export { assertRestorable, SERVICE_NAMES, type PersistedRun } from "./persistence/snapshot.js";
export { FileRunStore } from "./persistence/file-run-store.js";
export { MemoryRunStore } from "./persistence/memory-run-store.js";
export { replayRun, type ReplayOptions, type ReplayResult } from "./runner/replay.js";
export { forgeTracer, TRACER_NAME, GenAI, Forge } from "./telemetry/tracer.js";
export type { TelemetryOptions } from "./telemetry/telemetry-options.js";
export { RunTrace, type AttemptOutcome, type RunTraceInit, type TracedCall } from "./telemetry/run-trace.js";
export { interventionsBetween, type InterventionEvent } from "./telemetry/interventions.js";
export { providerName, requestModel } from "./telemetry/provider-name.js";
export { injectTraceCarrier, extractTraceCarrier, type TraceCarrier } from "./telemetry/trace-carrier.js";
export { spanRefIn, TRACE_KEY, type SpanRef } from "./telemetry/span-ref.js";
export { redactArgs, REDACTED } from "./telemetry/redact.js";
export type { Checkpoint, Commit, CommitRecord, DamagedRunInfo, ListedRun, ParentLink, RunDamage, RunEvent, RunInfo, RunLaunch, RunLease, RunLock, RunStatus, RunStore, SessionInfo } from "./persistence/run-store.js";
export { DEFAULT_LEASE_MS, isDamaged } from "./persistence/run-store.js";
export { diffJson, applyJson, type JsonDelta } from "./persistence/json-delta.js";
export {
  createWorkflowMachine,
  workflowMachine,
  type WorkflowMachine,
  type WorkflowEmitted,
  type WorkflowEvent,
  type Toolbox,
} from "../machines/workflow.machine.js";
export * from "./proxy/index.js";
export { proxyRequestMachine } from "../machines/proxy-request.machine.js";
// Prometheus metrics: the one metric set every surface counts in, and an endpoint for processes without a server.
export { createForgeMetrics, metricsResponse, labelBounder, type ForgeMetrics, type ForgeMetricsOptions } from "./telemetry/metrics.js";
export { serveMetrics, type MetricsEndpoint, type ServeMetricsOptions } from "./telemetry/serve-metrics.js";
