/**
 * An Oracle derived from a Workflow alone, for `--backend sim` on a module that exports none:
 * it calls each required step in order, each tool's prerequisites first, then the terminal
 * tool — one call per turn, with arguments generated from each tool's parameter schema
 * (schema-sample.ts) and checked by the tool's own validation. It reads no results: a step
 * whose result was an error is called again, as a model would, and the runner's retry and
 * tool-error budgets decide how long that goes on.
 */
import { SchemaOracleError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import type { Prerequisite } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";
import { jsonEqual } from "../guardrails/canonical-json.js";
import { expectedArgValue, isPrerequisiteMet, type CompletedStep } from "../guardrails/prerequisites.js";
import { sampleArgs } from "./schema-sample.js";
import type { Oracle, OracleStep } from "./simulated.js";
import type { OracleView } from "./simulated-view.js";

/** One call of the plan. */
export interface PlannedCall {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * The calls the schema-driven oracle makes, in order: every required step (its prerequisites
 * before it), then the first terminal tool (its prerequisites before it). Throws
 * SchemaOracleError when a tool's arguments cannot be generated.
 *
 * @example
 * schemaPlan(workflow).map((c) => c.tool); // ["lookup", "fetch", "answer"]
 */
export function schemaPlan(workflow: Workflow): PlannedCall[] {
  const generated = new Map<string, Record<string, unknown>>();
  const argsOf = (tool: string): Record<string, unknown> => {
    let args = generated.get(tool);
    if (!args) generated.set(tool, (args = checked(tool, sampleArgs(tool, workflow.getTool(tool).spec.parameters), "the tool's own validation")));
    return args;
  };
  const plan: PlannedCall[] = [];
  const visit = (call: PlannedCall): void => {
    for (const prereq of workflow.getTool(call.tool).prerequisites) {
      if (!isPrerequisiteMet(prereq, call.args, plan)) visit(prerequisiteCall(prereq, call));
    }
    if (!plan.some((c) => c.tool === call.tool && jsonEqual(c.args, call.args))) plan.push(call);
  };
  /** A prerequisite's call: its generated args, with the values an arg-matched prerequisite asks for. */
  const prerequisiteCall = (prereq: Prerequisite, dependent: PlannedCall): PlannedCall => {
    if (typeof prereq === "string") return { tool: prereq, args: argsOf(prereq) };
    const args = { ...argsOf(prereq.tool) };
    for (const [key, want] of Object.entries(prereq.args ?? {})) {
      const value = expectedArgValue(want, dependent.args);
      // "$x" naming an argument the dependent call does not send is met by a call without it.
      if (value === undefined) delete args[key];
      else args[key] = value;
    }
    return { tool: prereq.tool, args: checked(prereq.tool, args, `the prerequisite of "${dependent.tool}" (${JSON.stringify(prereq.args)})`) };
  };
  const checked = (tool: string, args: Record<string, unknown>, what: string): Record<string, unknown> => {
    const verdict = workflow.getTool(tool).validateArgs(args);
    if (verdict.ok) return args;
    const issues = verdict.issues.map((i) => `${i.path}: ${i.message}`).join("; ");
    throw new SchemaOracleError(tool, "validation", verdict.issues[0]?.path ?? "(root)", `${what} refuses the generated arguments ${JSON.stringify(args)} (${issues})`);
  };
  for (const step of workflow.requiredSteps) {
    if (!plan.some((c) => c.tool === step)) visit({ tool: step, args: argsOf(step) });
  }
  const terminal = workflow.terminalTools[0]!;
  visit({ tool: terminal, args: argsOf(terminal) });
  return plan;
}

/**
 * The schema-driven Oracle of a workflow (see the file comment). The plan is built at once, so a
 * schema it cannot play fails here, before any run. Deterministic: same workflow, same calls.
 *
 * @example
 * const client = new SimulatedClient({ oracle: schemaOracle(workflow), workflow });
 * await new WorkflowRunner({ client, contextManager }).run(workflow, "go");
 */
export function schemaOracle(workflow: Workflow): Oracle {
  const plan = schemaPlan(workflow);
  return (view: OracleView): OracleStep => {
    const done = completedThisTurn(view, workflow);
    const next = plan.find((call) => !done.some((s) => s.tool === call.tool && jsonEqual(s.args, call.args)));
    // Unreachable in a run (a terminal success ends it); a caller asking again gets prose.
    if (!next) return { text: `Done: ${plan.map((c) => c.tool).join(", ")}.` };
    return { tool: next.tool, args: structuredClone(next.args) };
  };
}

/**
 * The successful calls since the last terminal success: a session's next turn is a new run that
 * sees the earlier turns' results but must do its steps again.
 */
function completedThisTurn(view: OracleView, workflow: Workflow): CompletedStep[] {
  let done: CompletedStep[] = [];
  for (const r of view.results) {
    if (r.isError || !isPlainObject(r.args)) continue;
    if (workflow.isTerminal(r.tool)) done = [];
    else done.push({ tool: r.tool, args: r.args });
  }
  return done;
}
