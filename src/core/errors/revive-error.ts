/**
 * Errors to and from JSON: the machine context and snapshots keep errors as ErrorJSON, and a
 * restored run rebuilds the typed error from its code.
 */
import { BackendError, ClientContractError, GuardrailsExhaustedError, StreamError, ThinkingNotSupportedError } from "./backend-errors.js";
import { safeProperty, safeString } from "./describe-error.js";
import { type ErrorJSON, ForgeError } from "./forge-error.js";
import { HumanWaitTimeoutError } from "./human-errors.js";
import { McpServerError, McpToolError } from "./mcp-errors.js";
import { BudgetExhaustedError, type BudgetReason, CallbackError, type CallbackName, ChildWorkflowError, ContextBudgetExceeded, MaxIterationsError, PrerequisiteError, StepEnforcementError, WorkflowCancelledError } from "./run-errors.js";
import { ToolCallError, ToolExecutionError, ToolResultError, ToolTimeoutError } from "./tool-errors.js";

type Revivable = (data: Record<string, unknown>, message: string) => Error;

const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

const asNumber = (v: unknown): number => (typeof v === "number" ? v : 0);

const asText = (v: unknown): string => (typeof v === "string" ? v : "");

const REVIVERS: Record<string, Revivable> = {
  FORGE_TOOL_CALL: (d, m) =>
    new ToolCallError(m, {
      rawResponse: d.rawResponse as string | undefined,
      attempt: d.attempt as number | undefined,
      lastError: d.lastError as string | undefined,
    }),
  FORGE_TOOL_EXECUTION: (d) => new ToolExecutionError(asText(d.toolName), asText(d.lastError), asNumber(d.attempts)),
  FORGE_MAX_ITERATIONS: (d) => new MaxIterationsError(asNumber(d.iterations), asStrings(d.completedSteps), asStrings(d.pendingSteps)),
  FORGE_BUDGET_EXHAUSTED: (d) =>
    new BudgetExhaustedError(d.reason as BudgetReason, asNumber(d.used), asNumber(d.limit), asStrings(d.completedSteps)),
  FORGE_STEP_ENFORCEMENT: (d) => new StepEnforcementError(asText(d.terminalTool), asNumber(d.attempts), asStrings(d.pendingSteps)),
  FORGE_PREREQUISITE: (d) => new PrerequisiteError(asText(d.toolName), asNumber(d.violations), asStrings(d.missingPrereqs)),
  FORGE_WORKFLOW_CANCELLED: (d) =>
    new WorkflowCancelledError(Array.isArray(d.messages) ? d.messages : [], asStrings(d.completedSteps), asNumber(d.iteration), d.reason as string | undefined),
  FORGE_CONTEXT_BUDGET_EXCEEDED: (d) =>
    new ContextBudgetExceeded(asNumber(d.estimatedTokens), asNumber(d.budgetTokens), d.phaseReached as number | undefined),
  FORGE_BACKEND: (d, m) => new BackendError(asNumber(d.statusCode), asText(d.body), m),
  FORGE_THINKING_NOT_SUPPORTED: (d) => new ThinkingNotSupportedError(asText(d.model), asNumber(d.statusCode), asText(d.body)),
  FORGE_STREAM: (_d, m) => new StreamError(m),
  FORGE_CALLBACK: (d) => new CallbackError(d.callback as CallbackName, asText(d.error)),
  FORGE_CLIENT_CONTRACT: (d) => new ClientContractError(asText(d.client), asStrings(d.issues), asText(d.received)),
  FORGE_GUARDRAILS_EXHAUSTED: (d) => new GuardrailsExhaustedError(d.reason === "tool_errors" ? "tool_errors" : "retries", asNumber(d.attempts), asText(d.lastError)),
  FORGE_TOOL_TIMEOUT: (d) => new ToolTimeoutError(asText(d.toolName), asNumber(d.timeoutMs)),
  FORGE_TOOL_RESULT: (d) => new ToolResultError(asText(d.toolName), asText(d.reason), d.terminal === true),
  FORGE_MCP_SERVER: (d) => new McpServerError(asText(d.server), asText(d.reason), asText(d.stderrTail)),
  FORGE_MCP_TOOL: (d, m) => new McpToolError(asText(d.server), asText(d.tool), m),
  FORGE_CHILD_WORKFLOW: (d) =>
    new ChildWorkflowError(asText(d.workflow), asText(d.runId), d.reason as ChildWorkflowError["reason"], asText(d.detail), typeof d.childCode === "string" ? d.childCode : undefined),
  FORGE_HUMAN_WAIT_TIMEOUT: (d) => new HumanWaitTimeoutError(asNumber(d.waitedMs), asNumber(d.maxWaitMs), asStrings(d.pending)),
};

/**
 * Rebuild a typed error from its `toJSON()` form (the machine context and snapshots keep
 * errors as JSON). Unknown codes come back as a plain Error carrying name and message.
 */
export function reviveError(json: ErrorJSON): Error {
  const revive = Object.hasOwn(REVIVERS, json.code) ? REVIVERS[json.code] : undefined;
  if (revive) return revive(json.data ?? {}, json.message);
  const error = new Error(json.message);
  error.name = json.name;
  return error;
}

/** JSON form of any thrown value, ForgeError or not. */
export function errorToJSON(error: unknown): ErrorJSON {
  if (ForgeError.isInstance(error)) return error.toJSON();
  if (error instanceof Error) {
    let raw: unknown;
    try {
      raw = (error as { code?: unknown }).code;
    } catch {
      raw = undefined; // a throwing `code` getter: the error still needs a JSON form
    }
    const code = typeof raw === "string" ? raw : "ERR_UNKNOWN";
    return { name: safeProperty(error, "name"), code, message: safeProperty(error, "message"), data: {} };
  }
  return { name: "Error", code: "ERR_UNKNOWN", message: safeString(error), data: {} };
}
