/**
 * Loading a workflow module: a JavaScript module (or TypeScript under tsx) exporting a Workflow
 * as its default export, as `workflow`, or as its only Workflow export. Or it exports
 * `createWorkflow({ mcpTools, mcpServers })`, which builds the Workflow from the tools of the
 * MCP servers the command connected (required when servers are named). Used by `run`, `runs`,
 * `worker`, `mcp` and `visualize`.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidArgumentError } from "../core/errors.js";
import { Workflow } from "../core/workflow.js";
import type { Oracle } from "../clients/simulated.js";
import type { WorkflowModuleContext } from "../mcp/connect-servers.js";

/** The Workflow a module exports: default, `workflow`, its only Workflow export, or what its `createWorkflow` builds. */
export async function loadWorkflow(modulePath: string, mcp?: WorkflowModuleContext): Promise<Workflow> {
  return (await loadWorkflowModule(modulePath, mcp)).workflow;
}

/**
 * A module's Workflow, the Oracle it exports as `oracle` if any (for the simulated model; without
 * one, sim plays a schema-driven oracle), and the module's path as given. `mcp`: the connected MCP
 * servers' tools, for a module that exports `createWorkflow`.
 */
export async function loadWorkflowModule(modulePath: string, mcp?: WorkflowModuleContext): Promise<{ workflow: Workflow; oracle?: Oracle; module: string }> {
  const { workflow, mod } = await findWorkflow(modulePath, mcp);
  return typeof mod.oracle === "function" ? { workflow, oracle: mod.oracle as Oracle, module: modulePath } : { workflow, module: modulePath };
}

const isWorkflow = (v: unknown): v is Workflow => v instanceof Workflow || (typeof v === "object" && v !== null && typeof (v as Workflow).getToolSpecs === "function");

export async function importModule(modulePath: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path.resolve(modulePath)).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new InvalidArgumentError("workflow-module", `cannot import ${modulePath}: ${(error as Error).message}`);
  }
}

/** A module's `createWorkflow`; `required` (MCP servers were named) makes its absence an error. */
export function factoryOf(mod: Record<string, unknown>, modulePath: string, required: boolean): ((context: WorkflowModuleContext) => unknown) | undefined {
  if (typeof mod.createWorkflow === "function") return mod.createWorkflow as (context: WorkflowModuleContext) => unknown;
  if (required) throw new InvalidArgumentError("--mcp", `${modulePath} must export createWorkflow({ mcpTools, mcpServers }) to take the MCP servers' tools; it exports none`);
  return undefined;
}

async function findWorkflow(modulePath: string, mcp: WorkflowModuleContext | undefined): Promise<{ workflow: Workflow; mod: Record<string, unknown> }> {
  const mod = await importModule(modulePath);
  const factory = factoryOf(mod, modulePath, mcp !== undefined);
  if (!mcp) {
    if (isWorkflow(mod.default)) return { workflow: mod.default, mod };
    if (isWorkflow(mod.workflow)) return { workflow: mod.workflow, mod };
  }
  const found = Object.values(mod).filter(isWorkflow);
  if (!mcp && found.length === 1) return { workflow: found[0]!, mod };
  if (factory) {
    const built = await factory(mcp ?? { mcpTools: {}, mcpServers: {} });
    if (!isWorkflow(built)) throw new InvalidArgumentError("workflow-module", `createWorkflow of ${modulePath} must return a Workflow`);
    return { workflow: built, mod };
  }
  throw new InvalidArgumentError(
    "workflow-module",
    `${modulePath} must export one Workflow (as default, as "workflow", or as its only Workflow export) or createWorkflow({ mcpTools, mcpServers }); it exports ${found.length} Workflows`,
  );
}
