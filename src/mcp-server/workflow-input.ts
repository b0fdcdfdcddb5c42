/** The arguments of every workflow tool: the task, and optionally a session and prompt values. */
import { z } from "zod";
import type { Workflow } from "../core/workflow.js";
import { promptPlaceholders } from "./workflow-description.js";

/**
 * The input schema of a workflow's tool (zod: the SDK validates calls with it and lists it as
 * JSON Schema). `promptVars` names the system prompt's placeholders when it has some.
 *
 * @example
 * workflowInput(workflow).parse({ task: "Quote 250 units of PN-4471 from Acme Fasteners." });
 */
export function workflowInput(workflow: Workflow) {
  const vars = promptPlaceholders(workflow);
  return z.object({
    task: z.string().min(1).describe("The task, in plain words: the user's message the workflow's model works on"),
    sessionId: z
      .string()
      .min(1)
      .optional()
      .describe("Continue this session's conversation (each call is one turn, recorded in the run store); omit for a fresh conversation"),
    promptVars: z
      .record(z.string(), z.string())
      .optional()
      .describe(vars.length > 0 ? `Values for the system prompt's placeholders: ${vars.join(", ")}` : "Values for the system prompt's placeholders (this workflow's has none)"),
  });
}

export type WorkflowToolArgs = z.infer<ReturnType<typeof workflowInput>>;
