/**
 * `forge-ts/mcp`: tools from MCP servers. A separate entry because it needs the optional package
 * @modelcontextprotocol/sdk, which the main entry must not pull in.
 */
export { mcpTools, type McpToolSet, type McpToolsOptions, type McpCallRecord, type McpToolsChange, type McpServerSpec } from "./mcp/mcp-tools.js";
export { connectMcpServers, type ConnectedMcpServers, type WorkflowModuleContext } from "./mcp/connect-servers.js";
export { parseMcpConfig, splitCommandLine, type NamedMcpServer } from "./mcp/server-config.js";
export { McpServerError, McpToolError } from "./core/errors.js";
