/**
 * Workflows as tools: `workflowTool(research)` is a tool another workflow's model calls; each
 * call runs `research` as a child run of the calling run (src/runner/child-run.ts), and the
 * child's terminal result is the tool result.
 */
import { z } from "zod";
import { ToolDefinitionError } from "../core/errors.js";
import { defineTool, type ToolDef } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";

type ZodObjectLike = z.ZodType<Record<string, unknown>>;

const taskParameters = z.object({
  task: z.string().describe("What the workflow should do, in full: it sees nothing else of this conversation."),
});

export interface WorkflowToolOptions<TSchema extends ZodObjectLike = typeof taskParameters> {
  /** The tool's name (default: the workflow's name, which must then be a valid tool name). */
  name?: string;
  /** What the model reads (default: the workflow's description). */
  description?: string;
  /** The call's arguments (default `{ task: string }`). */
  input?: TSchema;
  /** The child run's user message from the call's arguments (default: `task` when it is a string, else the arguments as JSON). */
  toMessage?: (args: z.output<TSchema>) => string;
  /** Fills the child workflow's `{placeholders}` (given, or from the call's arguments). */
  promptVars?: Record<string, string> | ((args: z.output<TSchema>) => Record<string, string>);
  /** Deadline for one call, child run included, in ms (default: the runner's `toolTimeoutMs`, if any). */
  timeoutMs?: number;
}

/**
 * A tool that runs `workflow` as a child run of the calling run: on the caller's runner
 * settings and store, within its remaining budgets, resumed with it after a crash and
 * cancelled with it. The child's terminal result is the tool result; its failure (or a wait
 * for a person) is a tool error naming the child run (ChildWorkflowError).
 *
 * @example
 * const research = new Workflow({ name: "research", tools: { search, report }, terminalTool: "report" });
 * const planner = new Workflow({
 *   name: "planner",
 *   tools: { research: workflowTool(research, { description: "Research a question and report" }), answer },
 *   terminalTool: "answer",
 * });
 * await new WorkflowRunner({ client, contextManager, store }).run(planner, "Plan the launch");
 */
export function workflowTool<TSchema extends ZodObjectLike = typeof taskParameters>(
  workflow: Workflow,
  options: WorkflowToolOptions<TSchema> = {},
): ToolDef<z.output<TSchema>, unknown> {
  if (!isWorkflow(workflow)) throw new ToolDefinitionError(options?.name ?? "workflowTool", "expected a Workflow to run as the tool");
  const name = options.name ?? workflow.name;
  const { toMessage, promptVars } = options;
  if (toMessage !== undefined && typeof toMessage !== "function") throw new ToolDefinitionError(name, "toMessage must be a function (args) => string");
  if (promptVars !== undefined && typeof promptVars !== "function" && (typeof promptVars !== "object" || promptVars === null)) {
    throw new ToolDefinitionError(name, "promptVars must be an object of strings or a function (args) => object");
  }
  const parameters = (options.input ?? taskParameters) as TSchema;
  return defineTool({
    name,
    description: options.description ?? (workflow.description || `Run the "${workflow.name}" workflow on a task and return its result.`),
    parameters,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    execute: async (args, ctx) => {
      if (!ctx.runChild) throw new ToolDefinitionError(name, "a workflow tool runs inside a WorkflowRunner (its context has no runChild)");
      const message = toMessage ? toMessage(args) : defaultMessage(args);
      if (typeof message !== "string") throw new ToolDefinitionError(name, `toMessage returned a ${typeof message}, not a string`);
      const vars = typeof promptVars === "function" ? promptVars(args) : promptVars;
      return ctx.runChild(workflow, message, vars ? { promptVars: vars } : {});
    },
  });
}

function defaultMessage(args: Record<string, unknown>): string {
  return typeof args.task === "string" ? args.task : JSON.stringify(args);
}

// By shape, not instanceof: a Workflow from another copy of forge-ts is still a workflow.
const isWorkflow = (value: unknown): value is Workflow =>
  typeof value === "object" && value !== null && typeof (value as Workflow).name === "string" && typeof (value as Workflow).getToolSpecs === "function";
