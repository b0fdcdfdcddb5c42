/**
 * `forge-ts run --var name=value` (repeatable) and `--vars <file.json>`: the values of a
 * workflow's system-prompt `{placeholders}` (the library's `promptVars`), checked against the
 * placeholders the workflow has before a run id is printed or anything is stored.
 */
import { jsonFileFlag } from "../cli-kit/json-file-flag.js";
import { InvalidArgumentError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { promptPlaceholders, type Workflow } from "../core/workflow.js";
import type { RunStore } from "../persistence/run-store.js";

export interface PromptVarFlags {
  var?: readonly string[] | undefined;
  vars?: string | undefined;
  session?: string | undefined;
}

/** A `--vars` file: a JSON object whose values are all strings. */
function varsFile(file: string): Record<string, string> {
  const value = jsonFileFlag("--vars", file);
  const shape = 'a JSON object of strings, e.g. {"team": "ops"}';
  if (!isPlainObject(value)) throw new InvalidArgumentError("--vars", `${file} must hold ${shape}; it holds ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}`);
  const wrong = Object.entries(value).find(([, v]) => typeof v !== "string");
  if (wrong) throw new InvalidArgumentError("--vars", `${file} must hold ${shape}; "${wrong[0]}" is ${JSON.stringify(wrong[1])}`);
  return value as Record<string, string>;
}

/** `--var name=value`, split at the first "=" (the value may hold more). */
function varFlag(raw: string): [string, string] {
  const at = raw.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError("--var", `expected name=value, got ${JSON.stringify(raw)}`);
  return [raw.slice(0, at), raw.slice(at + 1)];
}

/**
 * The prompt variables of a run of `workflow`: the `--vars` file's, then each `--var` (which
 * wins). A `--var` the workflow has no placeholder for is refused (a typo would otherwise go
 * unnoticed); a `--vars` file may hold names it does not use, so one file serves several
 * workflows. Every placeholder must have a value.
 *
 * @example
 * promptVarsOf({ var: ["team=ops"] }, workflow, "./wf.mjs"); // { team: "ops" }
 */
export function promptVarsOf(flags: PromptVarFlags, workflow: Workflow, modulePath: string): Record<string, string> {
  const placeholders = promptPlaceholders(workflow);
  const has = placeholders.length > 0 ? `its system prompt has ${placeholders.map((p) => `{${p}}`).join(", ")}` : "its system prompt has no placeholders";
  const given = (flags.var ?? []).map(varFlag);
  const unknown = given.map(([name]) => name).filter((name) => !placeholders.includes(name));
  if (unknown.length > 0) throw new InvalidArgumentError("--var", `workflow "${workflow.name}" (${modulePath}) has no placeholder ${unknown.map((n) => `{${n}}`).join(", ")}; ${has}`);
  const vars = { ...(flags.vars !== undefined ? varsFile(flags.vars) : {}), ...Object.fromEntries(given) };
  const missing = placeholders.filter((p) => !Object.hasOwn(vars, p));
  if (missing.length > 0) {
    throw new InvalidArgumentError(
      "--var",
      `workflow "${workflow.name}" (${modulePath}) has system-prompt placeholders without a value: ${missing.join(", ")}; give ${missing.map((p) => `--var ${p}=<value>`).join(" ")} (or --vars <file.json>)`,
    );
  }
  return vars;
}

/**
 * The prompt variables of `forge-ts run`: promptVarsOf, except for a turn that continues a
 * `--session`'s conversation, which starts from its messages, system prompt included: no
 * variables, and none taken.
 */
export async function runPromptVars(flags: PromptVarFlags, workflow: Workflow, modulePath: string, store: RunStore): Promise<Record<string, string> | undefined> {
  const continuing = flags.session !== undefined && (await store.listRuns({ sessionId: flags.session })).length > 0;
  if (!continuing) return promptVarsOf(flags, workflow, modulePath);
  if (flags.var || flags.vars !== undefined) {
    throw new InvalidArgumentError(flags.var ? "--var" : "--vars", `session ${flags.session} continues its conversation, whose system prompt its first turn filled; give the values to a session's first turn`);
  }
  return undefined;
}
