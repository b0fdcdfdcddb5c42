/**
 * Several MCP servers at once (an `mcpServers` config, the `forge-ts run --mcp` flags): all
 * connected or none, their tools merged into one record, closed together.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { AnyToolDef } from "../core/tool.js";
import { mcpTools, type McpToolSet } from "./mcp-tools.js";
import type { NamedMcpServer } from "./server-config.js";

/**
 * What a workflow module's `createWorkflow` receives from `forge-ts run --mcp …`.
 *
 * @example
 * export function createWorkflow({ mcpTools }: WorkflowModuleContext) {
 *   return new Workflow({ name: "files", tools: { ...mcpTools, answer }, terminalTool: "answer" });
 * }
 */
export interface WorkflowModuleContext {
  /** Every connected server's tools in one record (each server's prefix applied). */
  mcpTools: Record<string, AnyToolDef>;
  /** Each server's tool set by its name (the config's key; mcp-1, mcp-2, … and mcp-url-1, … for flags). */
  mcpServers: Record<string, McpToolSet>;
}

/** Connected servers; `close()` ends them all. */
export interface ConnectedMcpServers extends WorkflowModuleContext {
  close(): Promise<void>;
}

/**
 * Connect every server (in parallel); when one fails, the others are closed and its error is
 * thrown. Two servers offering the same tool name is an InvalidArgumentError: give one a prefix.
 *
 * @example
 * const mcp = await connectMcpServers(parseMcpConfig(readFileSync("mcp.json", "utf8"), "mcp.json"));
 * try { await runner.run(createWorkflow(mcp), "…"); } finally { await mcp.close(); }
 */
export async function connectMcpServers(servers: readonly NamedMcpServer[], options: { signal?: AbortSignal } = {}): Promise<ConnectedMcpServers> {
  const settled = await Promise.allSettled(
    servers.map((s) => mcpTools(s.spec, { ...s.options, name: s.name, ...(options.signal ? { signal: options.signal } : {}) })),
  );
  const sets = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const close = async () => {
    await Promise.all(sets.map((s) => s.close()));
  };
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await close();
    throw failed.reason;
  }
  const tools: Record<string, AnyToolDef> = {};
  const owner = new Map<string, string>();
  for (const set of sets) {
    for (const [name, tool] of Object.entries(set.tools)) {
      const other = owner.get(name);
      if (other !== undefined) {
        await close();
        throw new InvalidArgumentError(
          "mcpServers",
          `MCP servers "${other}" and "${set.server}" both offer a tool "${name}"; give one a "prefix" in the config (or deny the tool)`,
        );
      }
      owner.set(name, set.server);
      tools[name] = tool;
    }
  }
  return { mcpTools: tools, mcpServers: Object.fromEntries(sets.map((s) => [s.server, s])), close };
}
