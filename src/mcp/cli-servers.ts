/**
 * The MCP servers of `forge-ts run` flags, connected. Loaded by the CLI only when a flag names
 * one, so the optional @modelcontextprotocol/sdk is needed only then.
 */
import { readFile } from "node:fs/promises";
import { InvalidArgumentError } from "../core/errors.js";
import { connectMcpServers, type ConnectedMcpServers } from "./connect-servers.js";
import { parseMcpConfig, serversFromFlags } from "./server-config.js";

export interface McpFlags {
  mcp?: string[] | undefined;
  mcpUrl?: string[] | undefined;
  mcpConfig?: string | undefined;
}

/** @example await connectFromFlags({ mcp: ["node fs-server.js /tmp"] }) */
export async function connectFromFlags(flags: McpFlags): Promise<ConnectedMcpServers> {
  let config;
  if (flags.mcpConfig !== undefined) {
    let text: string;
    try {
      text = await readFile(flags.mcpConfig, "utf8");
    } catch (error) {
      throw new InvalidArgumentError("--mcp-config", `cannot read ${flags.mcpConfig}: ${(error as Error).message}`);
    }
    config = parseMcpConfig(text, flags.mcpConfig);
  }
  const servers = serversFromFlags({ ...(flags.mcp ? { mcp: flags.mcp } : {}), ...(flags.mcpUrl ? { mcpUrl: flags.mcpUrl } : {}), ...(config ? { config } : {}) });
  return connectMcpServers(servers);
}
