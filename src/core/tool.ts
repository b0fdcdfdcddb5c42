/**
 * Tools: one definition is the LLM-facing JSON Schema, the argument validator and the
 * implementation. Parameters come from a zod object schema (types inferred) or a raw
 * JSON Schema (validated with ajv, since zod's fromJSONSchema is experimental).
 */
import { Ajv, type ValidateFunction } from "ajv";
import { z } from "zod";
import { describeError, ToolDefinitionError } from "./errors.js";
import { isPlainObject, jsonIssue } from "./json-value.js";
import type { Workflow } from "./workflow.js";

export type JSONSchema = Record<string, unknown>;

/** What the LLM sees for one tool. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JSONSchema;
}

/**
 * A schema's JSON text, made once per schema object: the proxy keys its validators by it and the
 * token estimate measures it, and a request's tools were stringified again for each (issue 46).
 * A schema given here must not change afterwards, which holds for a request's tools (built once
 * from its body) and for a tool's spec, which the runner sends unchanged every turn.
 *
 * @example
 * schemaText({ type: "object" }); // '{"type":"object"}'
 */
export function schemaText(schema: JSONSchema): string {
  let text = schemaTexts.get(schema);
  if (text === undefined) {
    text = JSON.stringify(schema);
    schemaTexts.set(schema, text);
  }
  return text;
}

const schemaTexts = new WeakMap<JSONSchema, string>();

/** Passed to every execute call. */
export interface ToolExecuteContext {
  /** Aborted when the run is cancelled or the actor stops. */
  signal: AbortSignal;
  /** `${runId}:${iteration}:${callIndex}` — stable across snapshot restore, for idempotent tools. */
  idempotencyKey: string;
  runId: string;
  iteration: number;
  callIndex: number;
  /**
   * Run another workflow as this call's child run and resolve with its result (what
   * `workflowTool` does). Present when the tool runs inside a WorkflowRunner. The child runs
   * on the calling runner's client, context manager, store and callbacks, within the calling
   * run's remaining budgets; its run id is derived from this call (`<runId>.<iteration>-<callIndex>`),
   * so a call re-run after a crash resumes it, or answers from the store once it finished,
   * instead of starting it again. Cancelled with this call's `signal`. Its failure rejects
   * with ChildWorkflowError. One child per call.
   */
  runChild?: (workflow: Workflow, message: string, options?: ChildRunOptions) => Promise<unknown>;
}

/** Options of `ToolExecuteContext.runChild`. */
export interface ChildRunOptions {
  /** Fills the child workflow's `{placeholders}` in its system prompt. */
  promptVars?: Record<string, string>;
}

/**
 * "call X first": by name, or arg-matched — `{ tool: "read", args: { path: "$path" } }` is met
 * only by an earlier successful `read` whose `path` equals this call's `path` ("$name" refers
 * to this call's argument; any other value must match literally).
 */
export type Prerequisite = string | { tool: string; args?: Record<string, unknown> };

export type ArgIssue = { path: string; message: string };
export type ArgValidation<TArgs> = { ok: true; value: TArgs } | { ok: false; issues: ArgIssue[] };

export interface ToolDef<TArgs = Record<string, unknown>, TResult = unknown> {
  readonly name: string;
  readonly description: string;
  readonly spec: ToolSpec;
  readonly prerequisites: readonly Prerequisite[];
  /** Deadline for one execution in ms; past it the call's signal is aborted and it fails as a tool error. */
  readonly timeoutMs?: number;
  /** A person approves each call first (or the calls this function picks); the run waits in `awaitingHuman`. */
  readonly needsApproval?: boolean | ((args: TArgs, context: ApprovalContext) => boolean);
  /** The result is a person's answer (the model asks, a person answers); `execute` never runs. */
  readonly humanInput?: true;
  /** Argument names masked (at any depth) wherever forge-ts reports the call: spans, logs, the visualizer feed and, when asked, stored logs. */
  readonly redact?: readonly string[];
  /** What the model sees of a result is cut to this many characters (with a marker); the caller gets it whole. */
  readonly maxResultChars?: number;
  validateArgs(args: unknown): ArgValidation<TArgs>;
  execute(args: TArgs, context: ToolExecuteContext): TResult | Promise<TResult>;
}

/** Any tool, whatever its argument type (for collections such as Workflow.tools). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDef = ToolDef<any, unknown>;

type ZodObjectLike = z.ZodType<Record<string, unknown>>;

/** What a `needsApproval` function is told besides the call's arguments. */
export interface ApprovalContext {
  runId: string;
  iteration: number;
}

interface BaseOptions<TResult, TArgs> {
  name: string;
  description: string;
  execute: (args: TArgs, context: ToolExecuteContext) => TResult | Promise<TResult>;
  prerequisites?: Prerequisite[];
  /** Deadline for one execution in ms (overrides the runner's `toolTimeoutMs`). */
  timeoutMs?: number;
  /**
   * A person approves the call before it runs: always (`true`) or when this function says so
   * for the call's arguments (a function that throws asks too). Rejected calls never run.
   */
  needsApproval?: boolean | ((args: TArgs, context: ApprovalContext) => boolean);
  /** Argument names (keys at any depth) masked as "[redacted]" wherever forge-ts reports the call; the tool itself gets them unmasked. */
  redact?: readonly string[];
  /**
   * The result the model sees is cut to this many characters, with a marker stating the true
   * size (overrides the runner's `maxResultChars`). The run's result, `toolEnd` events and the
   * stored log keep it whole.
   */
  maxResultChars?: number;
}

/**
 * Largest delay setTimeout honours; above it Node fires after 1 ms instead, so deadlines are
 * capped here.
 *
 * @example
 * defineTool({ ..., timeoutMs: Math.min(hours * 3_600_000, MAX_TIMER_MS) });
 */
export const MAX_TIMER_MS = 2_147_483_647;

export type DefineToolOptions<TSchema extends ZodObjectLike, TResult> =
  | (BaseOptions<TResult, z.output<TSchema>> & { parameters: TSchema; jsonSchema?: never })
  | (BaseOptions<TResult, Record<string, unknown>> & { jsonSchema: JSONSchema; parameters?: never });

const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * Define a tool.
 *
 * @example
 * const weather = defineTool({
 *   name: "get_weather", description: "Current weather for a city",
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }) => `72F in ${city}`,
 * });
 */
export function defineTool<TSchema extends ZodObjectLike, TResult>(
  options: DefineToolOptions<TSchema, TResult>,
): ToolDef<z.output<TSchema>, TResult>;
export function defineTool(options: DefineToolOptions<ZodObjectLike, unknown>): ToolDef<Record<string, unknown>, unknown> {
  const name = options?.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new ToolDefinitionError(String(name), "name must match /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/");
  }
  if (typeof options.description !== "string") throw new ToolDefinitionError(name, "description must be a string");
  if (typeof options.execute !== "function") throw new ToolDefinitionError(name, "execute must be a function");
  if (options.prerequisites !== undefined && !Array.isArray(options.prerequisites)) {
    throw new ToolDefinitionError(name, "prerequisites must be an array of tool names or { tool, args }");
  }
  const { timeoutMs, needsApproval, redact, maxResultChars } = options;
  if (maxResultChars !== undefined && !(typeof maxResultChars === "number" && Number.isSafeInteger(maxResultChars) && maxResultChars > 0)) {
    throw new ToolDefinitionError(name, `maxResultChars must be a positive integer number of characters, got ${String(maxResultChars)}`);
  }
  if (redact !== undefined && !(Array.isArray(redact) && redact.every((key) => typeof key === "string" && key !== ""))) {
    throw new ToolDefinitionError(name, "redact must be an array of argument names");
  }
  if (needsApproval !== undefined && typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    throw new ToolDefinitionError(name, "needsApproval must be a boolean or a function (args, context) => boolean");
  }
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new ToolDefinitionError(name, `timeoutMs must be a number of milliseconds in (0, ${MAX_TIMER_MS}], got ${String(timeoutMs)}`);
  }
  const prerequisites = [...(options.prerequisites ?? [])];
  for (const p of prerequisites) {
    const ok = typeof p === "string" || (isPlainObject(p) && typeof p.tool === "string" && (p.args === undefined || isPlainObject(p.args)));
    if (!ok) throw new ToolDefinitionError(name, `invalid prerequisite ${JSON.stringify(p)}: use "tool" or { tool, args }`);
  }

  let parameters: JSONSchema;
  let validateArgs: (args: unknown) => ArgValidation<Record<string, unknown>>;
  if (options.parameters !== undefined && options.jsonSchema !== undefined) {
    throw new ToolDefinitionError(name, "give either parameters (zod) or jsonSchema, not both");
  }
  if (options.parameters !== undefined) {
    const schema = options.parameters;
    if (!(schema instanceof z.ZodType)) throw new ToolDefinitionError(name, "parameters must be a zod schema");
    try {
      parameters = z.toJSONSchema(schema, { io: "input" }) as JSONSchema;
    } catch (cause) {
      throw new ToolDefinitionError(name, "parameters cannot be expressed as JSON Schema", { cause });
    }
    if (parameters.type !== "object") throw new ToolDefinitionError(name, "parameters must be a z.object(...) schema");
    delete parameters.$schema;
    validateArgs = guardValidator((args) => {
      const result = schema.safeParse(args);
      if (result.success) return { ok: true, value: result.data };
      return {
        ok: false,
        issues: result.error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(root)", message: i.message })),
      };
    });
  } else if (options.jsonSchema !== undefined) {
    const schema = options.jsonSchema;
    if (!isPlainObject(schema) || schema.type !== "object") {
      throw new ToolDefinitionError(name, 'jsonSchema must be an object schema ({ type: "object", ... })');
    }
    // ajv would compile a function-valued keyword into code, and specs go out as JSON.
    const problem = jsonIssue(schema);
    if (problem) throw new ToolDefinitionError(name, `jsonSchema must be plain JSON; found ${problem}`);
    try {
      validateArgs = compileJsonSchema(schema);
    } catch (cause) {
      throw new ToolDefinitionError(name, `malformed jsonSchema: ${(cause as Error).message}`, { cause });
    }
    parameters = structuredClone(schema);
  } else {
    throw new ToolDefinitionError(name, "parameters (zod) or jsonSchema is required; use z.object({}) for none");
  }

  const spec: ToolSpec = { name, description: options.description, parameters };
  const execute = options.execute as ToolDef["execute"];
  return Object.freeze({
    name,
    description: options.description,
    spec,
    prerequisites,
    validateArgs,
    execute,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(needsApproval !== undefined && needsApproval !== false ? { needsApproval } : {}),
    ...(redact !== undefined && redact.length > 0 ? { redact: Object.freeze([...redact]) } : {}),
    ...(maxResultChars !== undefined ? { maxResultChars } : {}),
  });
}

/**
 * A tool whose result a person supplies: the model calls it to ask (a question, a missing
 * detail), the run waits in `awaitingHuman`, and the person's answer is the tool result.
 *
 * @example
 * const askUser = humanInputTool({ name: "ask_user", description: "Ask the user a question", parameters: z.object({ question: z.string() }) });
 */
export function humanInputTool<TSchema extends ZodObjectLike>(
  options: { name: string; description: string; parameters: TSchema; prerequisites?: Prerequisite[] },
): ToolDef<z.output<TSchema>, unknown> {
  const def = defineTool({
    ...options,
    execute: () => {
      throw new ToolDefinitionError(options.name, "a human-input tool is answered by a person, never executed");
    },
  });
  return Object.freeze({ ...def, humanInput: true as const });
}

/**
 * The ajv instances every JSON Schema goes through. Building one and compiling the meta-schema in
 * it costs milliseconds (a request with 1,000 new tools spent 9 of its 11 s doing so once per
 * schema), so one `checker` checks every schema against the meta-schema and a shared instance
 * compiles them. A schema that declares an `$id` still gets an instance of its own: a shared one
 * would refuse a second schema with the same `$id`, and a schema that refers to itself by its
 * `$id` resolves only where that `$id` is registered. A compiling instance keeps what every
 * schema it compiled refers to (its scope, which all its validators hold), so after
 * COMPILES_PER_AJV compiles the next compile starts a new one: what stays reachable is bounded
 * by the validators still alive, not by the process's history.
 */
const AJV_OPTIONS = { allErrors: true, strict: false, logger: false } as const;
const COMPILES_PER_AJV = 256;
let compiler: { ajv: Ajv; compiles: number } | undefined;
let checker: { ajv: Ajv; draft07: ValidateFunction } | undefined;
const counts = { checked: 0, compiled: 0 };

function checkerAjv(): { ajv: Ajv; draft07: ValidateFunction } {
  if (checker) return checker;
  // Not checking its own meta-schema copy against the meta-schema saves compiling that too.
  const ajv = new Ajv({ ...AJV_OPTIONS, validateSchema: false });
  // ajv checks its meta-schemas with formats off, so a `pattern` that is no regular expression
  // passed the check and failed only when compiled. The draft-07 meta-schema compiled as an
  // ordinary schema, with a `regex` format (the `u` flag, as ajv compiles patterns), refuses it
  // up front: a schema compiled only when a call needs it is still refused before the model is asked.
  ajv.addFormat("regex", (pattern: string) => {
    try {
      new RegExp(pattern, "u");
      return true;
    } catch {
      return false;
    }
  });
  // Read, not got: getSchema would compile ajv's own copy too.
  const meta = ajv.schemas["http://json-schema.org/draft-07/schema"]!.schema as JSONSchema;
  checker = { ajv, draft07: ajv.compile({ ...meta, $id: "urn:forge-ts:draft-07-checked" }) };
  return checker;
}

/**
 * Throws ajv's complaint ("schema is invalid: data/type must be ...") when `schema` is not a JSON
 * Schema ajv accepts; a few microseconds, unlike compiling. A schema that passes still fails to
 * compile when a `$ref` points at nothing.
 *
 * @example
 * checkJsonSchema({ type: "object", required: "city" }); // throws: schema is invalid: data/required must be array
 */
export function checkJsonSchema(schema: JSONSchema): void {
  counts.checked++;
  const { ajv, draft07 } = checkerAjv();
  // A declared dialect is ajv's to judge (one it has not loaded is refused, as when compiling).
  if (isPlainObject(schema) && schema.$schema !== undefined) {
    ajv.validateSchema(schema, true);
    return;
  }
  if (!draft07(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(draft07.errors)}`);
}

/**
 * A raw JSON Schema as an argument validator (ajv). Throws ajv's own error when the schema
 * itself is malformed; callers wrap it in their error type. `checked`: the schema already passed
 * checkJsonSchema (compiled on first use, long after it was checked), so it is not checked again.
 *
 * @example
 * compileJsonSchema({ type: "object", required: ["city"] })({}); // { ok: false, issues: [{ path: "city", ... }] }
 */
export function compileJsonSchema(schema: JSONSchema, options: { checked?: boolean } = {}): (args: unknown) => ArgValidation<Record<string, unknown>> {
  if (options.checked !== true) checkJsonSchema(schema);
  counts.compiled++;
  const check: ValidateFunction = compilingAjv(schema).compile(schema);
  return guardValidator((args) => {
    if (check(args)) return { ok: true, value: args as Record<string, unknown> };
    return {
      ok: false,
      issues: (check.errors ?? []).map((e) => ({ path: issuePath(e.instancePath, e.params), message: e.message ?? "invalid" })),
    };
  });
}

/** Where `schema` compiles (already checked, so no instance checks it again). */
function compilingAjv(schema: JSONSchema): Ajv {
  // The text is a fraction of the compile's cost; a property merely named "$id" costs an instance, nothing else.
  if (JSON.stringify(schema).includes('"$id"')) return new Ajv({ ...AJV_OPTIONS, validateSchema: false });
  if (!compiler || compiler.compiles >= COMPILES_PER_AJV) compiler = { ajv: new Ajv({ ...AJV_OPTIONS, validateSchema: false }), compiles: 0 };
  compiler.compiles++;
  return compiler.ajv;
}

/**
 * Schemas checked and compiled in this process so far: the work a request caused is the
 * difference (tests and benches count it instead of timing it).
 *
 * @example
 * const before = jsonSchemaWork().compiled; compileJsonSchema({ type: "object" }); jsonSchemaWork().compiled - before; // 1
 */
export function jsonSchemaWork(): { checked: number; compiled: number } {
  return { ...counts };
}

/**
 * A validator that throws (a recursive schema on hostile nesting overflows the stack; a
 * refinement may throw) reports it as an issue, so the model gets an answer it can act on and
 * the loop never sees a raw RangeError.
 */
function guardValidator<T>(validate: (args: unknown) => ArgValidation<T>): (args: unknown) => ArgValidation<T> {
  return (args) => {
    try {
      return validate(args);
    } catch (error) {
      const message =
        error instanceof RangeError
          ? "the arguments are nested too deeply to validate; send flat JSON arguments"
          : `argument validation failed: ${describeError(error)}`;
      return { ok: false, issues: [{ path: "(root)", message }] };
    }
  };
}

/** ajv's JSON-pointer path, dotted and unescaped, plus the missing property for `required` errors. */
function issuePath(instancePath: string, params: Record<string, unknown>): string {
  const parts = instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (typeof params.missingProperty === "string") parts.push(params.missingProperty);
  return parts.length > 0 ? parts.join(".") : "(root)";
}

/** "field `city`: expected string" lines, for the tool-error channel. */
export function formatArgIssues(toolName: string, issues: readonly ArgIssue[]): string {
  const lines = issues.map((i) => `- ${i.path}: ${i.message}`);
  return `Invalid arguments for "${toolName}":\n${lines.join("\n")}`;
}

export function prerequisiteName(p: Prerequisite): string {
  return typeof p === "string" ? p : p.tool;
}
