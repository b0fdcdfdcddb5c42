/**
 * An MCP server whose tools are forge-ts workflows: one tool per workflow, named after it, that
 * takes a task and returns the workflow's result (see call-workflow.ts). One server serves one
 * connection: stdio has one, Streamable HTTP makes one per session.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import { callWorkflow, type CallWorkflowOptions } from "./call-workflow.js";
import { mcpToolName } from "./tool-name.js";
import { workflowDescription } from "./workflow-description.js";
import { sdk } from "./sdk.js";
import { workflowInput } from "./workflow-input.js";

export interface WorkflowMcpServerOptions extends CallWorkflowOptions {
  workflows: readonly Workflow[];
  /** The server's name and version in the MCP handshake. Default "forge-ts", "0.0.0". */
  name?: string;
  version?: string;
  /** Every call as it starts: a shutdown waits for these, so each run's last checkpoint is written. */
  onCall?: (call: Promise<CallToolResult>) => void;
}

const INSTRUCTIONS =
  "Each tool runs a forge-ts workflow: a local model working through the workflow's own tools, kept on track by " +
  "forge's guardrails (required steps, argument checks, retries), every step checkpointed. A call can take minutes: " +
  "ask for progress (it is sent at each state change). The run id comes back in the result's _meta and text.";

/**
 * The tool name of each workflow; an InvalidArgumentError when two names collide.
 *
 * @example
 * workflowToolNames([quote, notes]); // Map { "supplier_quote" => quote, "notes" => notes }
 */
export function workflowToolNames(workflows: readonly Workflow[]): Map<string, Workflow> {
  if (workflows.length === 0) throw new InvalidArgumentError("--workflow", "give at least one workflow module");
  const byName = new Map<string, Workflow>();
  for (const workflow of workflows) {
    const name = mcpToolName(workflow.name);
    const taken = byName.get(name);
    if (taken) throw new InvalidArgumentError("--workflow", `workflows "${taken.name}" and "${workflow.name}" would both be the MCP tool "${name}"; rename one`);
    byName.set(name, workflow);
  }
  return byName;
}

/**
 * @example
 * const server = workflowMcpServer({ workflows: [workflow], runner: () => ({ client, contextManager, store }) });
 * await server.connect(new StdioServerTransport());
 */
export function workflowMcpServer(options: WorkflowMcpServerOptions): McpServer {
  const server = new sdk.McpServer({ name: options.name ?? "forge-ts", version: options.version ?? "0.0.0" }, { instructions: INSTRUCTIONS });
  for (const [name, workflow] of workflowToolNames(options.workflows)) {
    server.registerTool(
      name,
      {
        title: workflow.name,
        description: workflowDescription(workflow),
        inputSchema: workflowInput(workflow),
        annotations: { readOnlyHint: false, openWorldHint: true },
      },
      (args, extra) => {
        const call = callWorkflow(workflow, args, extra, options);
        options.onCall?.(call);
        return call;
      },
    );
  }
  return server;
}
