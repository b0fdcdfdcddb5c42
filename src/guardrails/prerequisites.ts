/**
 * Tool prerequisites ("call X first"), by name or arg-matched, as pure functions over the list of
 * completed steps. Evaluated against the pre-batch state: a prerequisite run earlier in the same
 * batch does not count, because the batch has not run yet.
 */
import { isPlainObject } from "../core/json-value.js";
import type { Prerequisite } from "../core/tool.js";
import { canonicalJson, jsonEqual } from "./canonical-json.js";

/** One successful tool execution. */
export interface CompletedStep {
  tool: string;
  args: unknown;
}

const ARG_REF = /^\$([A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * The value a prerequisite arg pattern requires: "$x" resolves to this call's `x`.
 *
 * @example
 * expectedArgValue("$path", { path: "a.txt" }); // "a.txt"
 */
export function expectedArgValue(pattern: unknown, callArgs: unknown): unknown {
  const ref = typeof pattern === "string" ? ARG_REF.exec(pattern) : null;
  if (!ref) return pattern;
  return isPlainObject(callArgs) ? callArgs[ref[1] as string] : undefined;
}

/**
 * Is `prereq` satisfied for a call with `callArgs`, given the steps completed so far?
 * A name needs any successful run of that tool; `{ tool, args }` needs a run whose args match every
 * entry ("$x" = deep-equal to this call's `x`; anything else must deep-equal literally).
 *
 * @example
 * isPrerequisiteMet({ tool: "read", args: { path: "$path" } }, { path: "a" }, [{ tool: "read", args: { path: "a" } }]); // true
 */
export function isPrerequisiteMet(prereq: Prerequisite, callArgs: unknown, completed: readonly CompletedStep[]): boolean {
  if (typeof prereq === "string") return completed.some((s) => s.tool === prereq);
  const pattern = Object.entries(prereq.args ?? {});
  return completed.some(
    (step) =>
      step.tool === prereq.tool &&
      pattern.every(([key, want]) => jsonEqual(isPlainObject(step.args) ? step.args[key] : undefined, expectedArgValue(want, callArgs))),
  );
}

/**
 * How a prerequisite reads in messages and errors: `read` or `read(path="a.txt")` with "$x" resolved.
 *
 * @example
 * describePrerequisite({ tool: "read", args: { path: "$path" } }, { path: "a.txt" }); // 'read(path="a.txt")'
 */
export function describePrerequisite(prereq: Prerequisite, callArgs: unknown): string {
  if (typeof prereq === "string") return prereq;
  const entries = Object.entries(prereq.args ?? {});
  if (entries.length === 0) return prereq.tool;
  const args = entries.map(([k, v]) => `${k}=${canonicalJson(expectedArgValue(v, callArgs))}`).join(", ");
  return `${prereq.tool}(${args})`;
}

/** A call whose prerequisites are not met; `missing` as rendered by `describePrerequisite`. */
export interface PrerequisiteViolation {
  index: number;
  tool: string;
  missing: string[];
}

/**
 * Every call of the batch with unmet prerequisites, evaluated against the pre-batch state
 * (a prerequisite earlier in the same batch does not count).
 *
 * @example
 * findPrerequisiteViolations([{ tool: "edit", args: {} }], { edit: { prerequisites: ["read"] } }, []);
 * // [{ index: 0, tool: "edit", missing: ["read"] }]
 */
export function findPrerequisiteViolations(
  calls: readonly { tool: string; args: unknown }[],
  tools: Readonly<Record<string, { prerequisites: readonly Prerequisite[] }>>,
  completed: readonly CompletedStep[],
): PrerequisiteViolation[] {
  const violations: PrerequisiteViolation[] = [];
  calls.forEach((call, index) => {
    const prereqs = Object.hasOwn(tools, call.tool) ? (tools[call.tool]?.prerequisites ?? []) : [];
    const missing = prereqs.filter((p) => !isPrerequisiteMet(p, call.args, completed)).map((p) => describePrerequisite(p, call.args));
    if (missing.length > 0) violations.push({ index, tool: call.tool, missing });
  });
  return violations;
}
