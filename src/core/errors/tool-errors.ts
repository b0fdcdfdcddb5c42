/**
 * Errors about tools and workflow definitions: defining them, the model calling them, running
 * them.
 */
import { ForgeError } from "./forge-error.js";

/** A Workflow failed its construction-time checks. */
export class WorkflowDefinitionError extends ForgeError {
  override readonly code = "FORGE_WORKFLOW_DEFINITION";
  constructor(
    message: string,
    readonly workflow?: string,
  ) {
    super(workflow ? `Workflow "${workflow}": ${message}` : message);
  }
  override get data() {
    return { workflow: this.workflow };
  }
}

/** A tool definition is unusable (malformed schema, missing name, ...). */
export class ToolDefinitionError extends ForgeError {
  override readonly code = "FORGE_TOOL_DEFINITION";
  constructor(
    readonly toolName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`Tool "${toolName}": ${message}`, options);
  }
  override get data() {
    return { toolName: this.toolName };
  }
}

/** The model failed to produce a valid tool call within the retry budget. */
export class ToolCallError extends ForgeError {
  override readonly code = "FORGE_TOOL_CALL";
  readonly rawResponse: string | undefined;
  readonly attempt: number | undefined;
  readonly lastError: string | undefined;
  constructor(
    message: string,
    fields: { rawResponse?: string; attempt?: number; lastError?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: fields.cause });
    this.rawResponse = fields.rawResponse;
    this.attempt = fields.attempt;
    this.lastError = fields.lastError;
  }
  override get data() {
    return { rawResponse: this.rawResponse, attempt: this.attempt, lastError: this.lastError };
  }
}

/** A tool kept throwing and the model did not self-correct within maxToolErrors. */
export class ToolExecutionError extends ForgeError {
  override readonly code = "FORGE_TOOL_EXECUTION";
  constructor(
    readonly toolName: string,
    readonly lastError: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(`Tool "${toolName}" failed ${attempts} consecutive time(s); last error: ${lastError}`, options);
  }
  override get data() {
    return { toolName: this.toolName, lastError: this.lastError, attempts: this.attempts };
  }
}

/**
 * Thrown by tool authors: the arguments were valid but the data did not resolve
 * (unknown id, empty search). Not a ForgeError: the loop feeds it back to the model
 * without counting it as a tool error and without recording the step.
 */
export class ToolResolutionError extends Error {
  readonly code = "FORGE_TOOL_RESOLUTION";
  constructor(
    message: string,
    readonly toolName?: string,
  ) {
    super(message);
    this.name = "ToolResolutionError";
  }
  static isInstance(value: unknown): value is ToolResolutionError {
    if (!(value instanceof Error)) return false;
    try {
      return (value as { code?: unknown }).code === "FORGE_TOOL_RESOLUTION";
    } catch {
      return false; // a throwing `code` getter is not ours
    }
  }
}

/**
 * A tool ran past its deadline (`defineTool({ timeoutMs })` or the runner's `toolTimeoutMs`):
 * its signal was aborted and the call failed as a tool error fed back to the model.
 */
export class ToolTimeoutError extends ForgeError {
  override readonly code = "FORGE_TOOL_TIMEOUT";
  constructor(
    readonly toolName: string,
    readonly timeoutMs: number,
  ) {
    super(`Tool "${toolName}" did not finish within its ${timeoutMs} ms deadline; it was aborted`);
  }
  override get data() {
    return { toolName: this.toolName, timeoutMs: this.timeoutMs };
  }
}

/**
 * A tool returned a value that has no JSON form (BigInt, a cycle, a throwing `toJSON`, a
 * function). Fed back to the model as a tool error; for a terminal tool it fails the run,
 * since its result is what `run()` returns and snapshots must stay JSON.
 */
export class ToolResultError extends ForgeError {
  override readonly code = "FORGE_TOOL_RESULT";
  constructor(
    readonly toolName: string,
    readonly reason: string,
    readonly terminal: boolean,
    options?: { cause?: unknown },
  ) {
    super(`Tool "${toolName}" returned a value that is not JSON-serializable: ${reason}`, options);
  }
  override get data() {
    return { toolName: this.toolName, reason: this.reason, terminal: this.terminal };
  }
}

/**
 * The schema-driven oracle (`schemaOracle`) cannot play a workflow: a tool's parameter schema
 * uses a keyword it cannot satisfy (`keyword`, at `path` in the arguments), or the tool's own
 * validation refuses what it generated. Export a hand-written Oracle for such a workflow.
 */
export class SchemaOracleError extends ForgeError {
  override readonly code = "FORGE_SCHEMA_ORACLE";
  constructor(
    readonly toolName: string,
    readonly keyword: string,
    readonly path: string,
    readonly reason: string,
  ) {
    super(`Tool "${toolName}": the schema-driven oracle cannot generate arguments (${keyword} at ${path}): ${reason}`);
  }
  override get data() {
    return { toolName: this.toolName, keyword: this.keyword, path: this.path, reason: this.reason };
  }
}
