/**
 * Errors from MCP servers and their tools, and from the eval fixtures that share such servers
 * across runs.
 */
import { ForgeError } from "./forge-error.js";

/**
 * An MCP server (`mcpTools()`, `forge-ts run --mcp`) could not be started or reached, exited or
 * lost its connection, or was already closed. Names the server and ends with the tail of its
 * stderr when it is a process. Thrown by `mcpTools()` at connect time; from a tool call it is a
 * tool error like any throwing tool's.
 */
export class McpServerError extends ForgeError {
  override readonly code = "FORGE_MCP_SERVER";
  constructor(
    readonly server: string,
    readonly reason: string,
    readonly stderrTail: string = "",
    options?: { cause?: unknown },
  ) {
    super(`MCP server "${server}" ${reason}${stderrTail ? `\n--- server stderr (tail) ---\n${stderrTail}` : ""}`, options);
  }
  override get data() {
    return { server: this.server, reason: this.reason, stderrTail: this.stderrTail };
  }
}

/**
 * An MCP tool answered with `isError: true`, or the server refused the call (a JSON-RPC error
 * such as an unknown tool). The message is what the server said; it reaches the model on the
 * tool-error channel. The raw result, when there was one, is on `result` (not in `data`).
 */
export class McpToolError extends ForgeError {
  override readonly code = "FORGE_MCP_TOOL";
  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
    readonly result?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { server: this.server, tool: this.tool };
  }
}

/**
 * An eval fixture (a resource a scenario family shares across runs, such as an MCP server) was
 * used while not open, or released more often than acquired: a harness bug, never model data.
 */
export class EvalFixtureError extends ForgeError {
  override readonly code = "FORGE_EVAL_FIXTURE";
  constructor(
    readonly fixture: string,
    message: string,
  ) {
    super(`eval fixture "${fixture}": ${message}`);
  }
  override get data() {
    return { fixture: this.fixture };
  }
}
