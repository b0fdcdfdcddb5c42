/**
 * Every error forge-ts throws, from one import point (undici's lib/core/errors.js is the model).
 *
 * Each class has a stable literal `code`, structured context fields and an optional `cause`.
 * `isInstance()` checks the code-branded symbol instead of the prototype chain, so checks
 * survive two copies of forge-ts in one process. `toJSON()` keeps errors JSON-safe for the
 * machine context and persisted snapshots.
 *
 * The classes live in src/core/errors/, one file per area (tools, runs, backends, stores, people
 * in the loop, MCP) so none grows past a screenful of classes; import them from here, never from
 * a file in that folder.
 */
export { type ErrorJSON, ForgeError, InvalidArgumentError, MissingPackageError } from "./errors/forge-error.js";
export { WorkflowDefinitionError, ToolDefinitionError, ToolCallError, ToolExecutionError, ToolResolutionError, ToolTimeoutError, ToolResultError, SchemaOracleError } from "./errors/tool-errors.js";
export { MaxIterationsError, type BudgetReason, BudgetExhaustedError, StepEnforcementError, PrerequisiteError, WorkflowCancelledError, ContextBudgetExceeded, type CallbackName, CallbackError, ChildWorkflowError } from "./errors/run-errors.js";
export { BudgetResolutionError, HardwareDetectionError, ContextDiscoveryError, BackendError, ThinkingNotSupportedError, StreamError, UnsupportedModelError, ClientContractError, GuardrailsExhaustedError, ServerError, type ProxyConfigIssue, ProxyConfigError, BackendBusyError } from "./errors/backend-errors.js";
export { SnapshotError, StoreError, CorruptRecordError, RunNotReplayableError, RunLockedError, RunLockLostError, SessionTurnFailedError } from "./errors/store-errors.js";
export { type PendingHumanRequest, RunWaitingError, HumanDecisionError, HumanWaitTimeoutError } from "./errors/human-errors.js";
export { McpServerError, McpToolError } from "./errors/mcp-errors.js";
export { EvalFixtureError } from "./errors/eval-errors.js";
export { describeError, safeString } from "./errors/describe-error.js";
export { reviveError, errorToJSON } from "./errors/revive-error.js";
