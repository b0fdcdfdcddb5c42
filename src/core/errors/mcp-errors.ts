/** Errors from MCP servers and their tools. */
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
