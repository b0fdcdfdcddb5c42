/** forge-ts workflows as MCP tools (`forge-ts mcp`); loaded only when asked for, as it needs @modelcontextprotocol/sdk. */
export { callWorkflow, type CallContext, type CallWorkflowOptions } from "./call-workflow.js";
export { doneResult, failedResult, waitingResult, RUN_ID_META, RUN_STATUS_META, type RunStatus } from "./call-result.js";
export { isLoopbackHost, mcpHttpApp, MCP_PATH, type McpHttpApp, type McpHttpAppOptions } from "./mcp-http-app.js";
export { mcpToolName } from "./tool-name.js";
export { promptPlaceholders, workflowDescription } from "./workflow-description.js";
export { workflowInput, type WorkflowToolArgs } from "./workflow-input.js";
export { workflowMcpServer, workflowToolNames, type WorkflowMcpServerOptions } from "./workflow-mcp-server.js";
export { sdk } from "./sdk.js";
