/**
 * forge-ts: reliable tool-calling loops for self-hosted LLMs.
 *
 * The root exports what the docs use and the types a user writes, each name chosen here (no
 * `export *`): test/root-exports.test.ts snapshots the runtime names, so growth is a decision.
 * Test doubles live in `forge-ts/testing`; the simulated model, which the quick start runs on,
 * is in both.
 *
 * @example
 * import { WorkflowRunner, Workflow, defineTool, ContextManager, OllamaClient } from "forge-ts";
 */
import { deprecate } from "node:util";
import { toApiMessage as toApiMessageNow, wireMessageOf as wireMessageOfNow } from "./core/wire-messages.js";
import { recordDecision as recordDecisionNow } from "./runner/decisions.js";
import { forkRun as forkRunNow } from "./runner/fork.js";

// Errors: every class a caller may catch, and their JSON form.
export {
  ForgeError,
  InvalidArgumentError,
  MissingPackageError,
  WorkflowDefinitionError,
  ToolDefinitionError,
  ToolCallError,
  ToolExecutionError,
  ToolResolutionError,
  ToolTimeoutError,
  ToolResultError,
  SchemaOracleError,
  MaxIterationsError,
  BudgetExhaustedError,
  StepEnforcementError,
  PrerequisiteError,
  WorkflowCancelledError,
  ContextBudgetExceeded,
  CallbackError,
  ChildWorkflowError,
  BudgetResolutionError,
  HardwareDetectionError,
  ContextDiscoveryError,
  BackendError,
  ThinkingNotSupportedError,
  StreamError,
  UnsupportedModelError,
  ClientContractError,
  GuardrailsExhaustedError,
  ServerError,
  ProxyConfigError,
  BackendBusyError,
  SnapshotError,
  StoreError,
  CorruptRecordError,
  RunNotReplayableError,
  RunLockedError,
  RunLockLostError,
  SessionTurnFailedError,
  RunWaitingError,
  HumanDecisionError,
  HumanWaitTimeoutError,
  McpServerError,
  McpToolError,
  EvalFixtureError,
  errorToJSON,
  reviveError,
  type ErrorJSON,
  type BudgetReason,
  type CallbackName,
  type ProxyConfigIssue,
  type PendingHumanRequest,
} from "./core/errors.js";

// Messages, model responses, tools and workflows: what a workflow or an LLMClient is written with.
export { MessageRole, MessageType, createMessage, type MessageMeta, type ToolCallInfo, type Message } from "./core/messages.js";
export {
  ChunkType,
  textResponse,
  toolCallsResponse,
  type ToolCall,
  type Usage,
  type LLMResponse,
  type StreamChunk,
  type ToolChoice,
  type RequestOverrides,
  type SendOptions,
  type ModelInfo,
  type LLMClient,
  type ContextLengthOptions,
  type CountTokensOptions,
} from "./core/llm.js";
export { assertLLMResponse } from "./core/response-contract.js";
export {
  defineTool,
  humanInputTool,
  type JSONSchema,
  type ToolSpec,
  type ToolExecuteContext,
  type ChildRunOptions,
  type Prerequisite,
  type ArgIssue,
  type ArgValidation,
  type ToolDef,
  type AnyToolDef,
  type ApprovalContext,
  type DefineToolOptions,
} from "./core/tool.js";
export { Workflow, type WorkflowOptions } from "./core/workflow.js";
export { serializeMessages, type ApiFormat, type OllamaWireMessage, type OpenAIWireMessage, type WireMessage, type ReasoningReplay } from "./core/wire-messages.js";
export { consoleLogger, type ForgeLogger } from "./core/logger.js";
export { respondTool, RESPOND_TOOL_NAME } from "./tools/respond.js";
export { workflowTool, type WorkflowToolOptions } from "./tools/workflow-tool.js";

// Rescue parsing: tool calls from model text in every supported open-model format.
export { rescueToolCall, extractToolCalls } from "./parsing/rescue.js";
export { splitReasoning } from "./parsing/think.js";
export { buildToolPrompt } from "./parsing/tool-prompt.js";
export { RESCUE_FORMATS, type RescueFormat } from "./parsing/render.js";

// The guardrails for foreign loops (seed 002, "Middleware").
export { Guardrails, type ExecutedResult, type GuardrailDecision, type GuardrailsOptions } from "./runner/guardrails.js";
export type { BlockedResult } from "./guardrails/blocked-batch.js";
export type { ValidatedCall } from "./guardrails/response-validator.js";
export type { Nudge, NudgeKind } from "./guardrails/nudges.js";
export type { CompletedStep } from "./guardrails/prerequisites.js";

// Context management: budgets, token estimation and compaction strategies.
export { ContextManager, type CompactEvent, type ContextManagerOptions } from "./context/context-manager.js";
export type { CompactOptions, CompactResult, CompactStrategy } from "./context/compact-strategy.js";
export { NoCompact } from "./context/no-compact.js";
export { SlidingWindowCompact } from "./context/sliding-window-compact.js";
export { TieredCompact } from "./context/tiered-compact.js";
export { estimateTokensChars4, type TokenEstimator } from "./context/token-estimator.js";
export { detectHardware, type GpuInfo, type HardwareProfile } from "./context/hardware.js";

// Backends: one client per backend, the embedded simulated model, server lifecycle and sampling.
export { OllamaClient, type OllamaClientOptions } from "./clients/ollama.js";
export { LlamafileClient, type LlamafileClientOptions, type LlamafileMode } from "./clients/llamafile.js";
export { OpenAICompatClient, type OpenAICompatClientOptions } from "./clients/openai-compat.js";
export { AnthropicClient, type AnthropicClientOptions } from "./clients/anthropic.js";
export {
  SimulatedClient,
  type SimulatedClientOptions,
  type SimulatedTurn,
  type Oracle,
  type OracleStep,
  type OracleView,
  type FaultKind,
  type FaultProfile,
} from "./clients/simulated.js";
export { schemaOracle } from "./clients/schema-oracle.js";
export { BudgetMode } from "./server/budget.js";
export type { LaunchCommand, LaunchSpec, ManagedBackend } from "./server/launch-command.js";
export { ServerManager, type BackendKind, type ServerManagerOptions, type StartOptions, type StartWithBudgetOptions } from "./server/server-manager.js";
export { setupBackend, type BackendSetup, type SetupBackendOptions } from "./server/setup-backend.js";
export { getSamplingDefaults, type ResolveSamplingOptions, type SamplingParams } from "./models/sampling.js";

// The runner, its stores and what it records.
export { WorkflowRunner, MACHINE_VERSION, type WorkflowRunnerOptions, type RunOptions, type RunOutcome } from "./runner.js";
export type { DecisionInput, DecisionReceipt } from "./runner/decisions.js";
export type { ForkOptions, ForkPatch, ForkResult } from "./runner/fork.js";
export { replayRun, type ReplayOptions, type ReplayResult } from "./runner/replay.js";
export { childRunsOf, parentLinkOf, type ChildRunInfo } from "./runner/child-links.js";
export type { HumanDecision, HumanKind, HumanRequest } from "./loop/human.js";
export type { RunStats } from "./loop/run-stats.js";
export type { WorkflowContext, LoopBudget, LoopSwitches } from "./loop/context.js";
export type { PersistedRun } from "./persistence/snapshot.js";
export { FileRunStore } from "./persistence/file-run-store.js";
export { MemoryRunStore } from "./persistence/memory-run-store.js";
export type { Checkpoint, Commit, CommitRecord, DamagedRunInfo, ListedRun, ParentLink, RunDamage, RunEvent, RunInfo, RunLaunch, RunLease, RunLock, RunStatus, RunStore, SessionInfo } from "./persistence/run-store.js";
export { DEFAULT_LEASE_MS, isDamaged } from "./persistence/run-store.js";

// The statecharts, for inspection and visualisation.
export { createWorkflowMachine, workflowMachine, type WorkflowMachine, type WorkflowEmitted, type WorkflowEvent, type Toolbox } from "../machines/workflow.machine.js";
export type { WorkflowFact, GuardrailFact, NudgeFactKind } from "./loop/facts.js";
export { proxyRequestMachine } from "../machines/proxy-request.machine.js";

// The OpenAI- and Anthropic-compatible proxy.
export { createProxy, type ProxyOptions, type ProxyServer } from "./proxy/create-proxy.js";
export type { Dialect } from "./proxy-request/http-error.js";
export type { ProxyStatsSnapshot } from "./proxy/proxy-stats.js";
export type { ProxyAnswer, ProxyOutcome, ProxyRequest, Exhaustion } from "./proxy-request/proxy-request.js";
export { loadProxyConfig, parseProxyConfig, type ProxyConfig, type ResolvedProxyConfig } from "./proxy/fleet/proxy-config.js";
export type { BackendHealthEntry, HealthReport } from "./proxy/fleet/backend-health.js";
export { parsePolicy, type ProxyPolicy, type ProxyPolicyInput } from "./proxy-request/request-policy.js";
export { checkStructuredOutput, extractJsonAnswer, type OutputFormat } from "./guardrails/structured-output.js";

// Telemetry: the tracer and its attribute names, trace context across a queue, Prometheus metrics.
export { forgeTracer, TRACER_NAME, GenAI, Forge } from "./telemetry/tracer.js";
export type { TelemetryOptions } from "./telemetry/telemetry-options.js";
export { injectTraceCarrier, extractTraceCarrier, type TraceCarrier } from "./telemetry/trace-carrier.js";
export { createForgeMetrics, metricsResponse, type ForgeMetrics, type ForgeMetricsOptions } from "./telemetry/metrics.js";
export { serveMetrics, type MetricsEndpoint, type ServeMetricsOptions } from "./telemetry/serve-metrics.js";

// Second ways to do one thing: deprecated for one minor version (a warning on first use), then removed.
/** @deprecated Use `runner.decide(runId, decision)`; removed in 0.3.0. */
export const recordDecision = deprecate(recordDecisionNow, "forge-ts: recordDecision(store, runId, decision, now) is deprecated; use runner.decide(runId, decision)", "FORGE_DEP_RECORD_DECISION");
/** @deprecated Use `runner.fork(runId, options)`; removed in 0.3.0. */
export const forkRun = deprecate(forkRunNow, "forge-ts: forkRun(store, runId, options) is deprecated; use runner.fork(runId, options)", "FORGE_DEP_FORK_RUN");
/** @deprecated Use `serializeMessages(messages, format)`; removed in 0.3.0. */
export const toApiMessage = deprecate(toApiMessageNow, "forge-ts: toApiMessage(message, format) is deprecated; use serializeMessages(messages, format)", "FORGE_DEP_TO_API_MESSAGE");
/** @deprecated Use `serializeMessages(messages, format)`; removed in 0.3.0. */
export const wireMessageOf = deprecate(wireMessageOfNow, "forge-ts: wireMessageOf(message, format) is deprecated; use serializeMessages(messages, format)", "FORGE_DEP_WIRE_MESSAGE_OF");
