/**
 * The caller's tool schemas as validator tool definitions. Harnesses send the same tools on
 * every request, often hundreds or thousands of them, and most share a handful of schemas;
 * compiling a schema costs far more than checking it or validating with it (issue 46: a request
 * with 1,000 new tools held the event loop for seconds). So:
 *
 * - a schema is a shape, keyed by its JSON text (without `$schema`), and tools with the same
 *   text share one shape and its validator, whatever their names; the text keeps its key order,
 *   as ajv reports issues in schema order, so a shared validator answers exactly as the tool's own;
 * - a new shape is checked against the meta-schema at once (a malformed schema is the caller's
 *   400, before the backend is asked) but compiled only when a call to one of its tools is
 *   validated: a request pays for the tools the model calls, not for the tools it is offered;
 * - the shapes are kept in an LRU far larger than any tool set (MAX_SHAPES), also bounded in text;
 * - the definitions are made once per tool list and reused by every attempt of the request.
 */
import { checkJsonSchema, compileJsonSchema, schemaText, type AnyToolDef, type ArgValidation, type JSONSchema, type ToolSpec } from "../core/tool.js";
import { HttpError } from "./http-error.js";

/**
 * Shapes kept. A shape not yet compiled is its text and a closure; a thrashed one costs only a
 * re-check (microseconds) and, if called again, a compile: the bound is for memory, and sits far
 * above the largest tool sets seen (a few thousand tools, most sharing shapes).
 */
const MAX_SHAPES = 16_384;
/** Schema text kept, in characters, whatever the count: four bodies of the default 16 MiB limit. */
const MAX_SHAPE_CHARS = 64 * 1024 * 1024;

type Validate = (args: unknown) => ArgValidation<Record<string, unknown>>;

interface Shape {
  /** The schema's JSON text: the key, and what the validator is compiled from. */
  readonly text: string;
  /** The validator, compiled on first use; a schema ajv cannot compile refuses every call. */
  compiled?: { validate: Validate; failure?: string };
}

const shapes = new Map<string, Shape>();
let shapeChars = 0;
/** Each tool list's definitions: the request's list is the key, so they go with it. */
const defsOfList = new WeakMap<readonly ToolSpec[], Record<string, AnyToolDef>>();

function notExecutable(): never {
  throw new Error("the proxy never executes tools: the caller does");
}

/** The cached shape of `schema`, or a new one once the schema passes the meta-schema. */
function shapeOf(schema: JSONSchema, what: string): Shape {
  const checked = withoutDialect(schema);
  const text = checked === schema ? schemaText(schema) : JSON.stringify(checked);
  const hit = shapes.get(text);
  if (hit) {
    // Refresh recency: Map iteration order is insertion order, so the oldest entry goes first.
    shapes.delete(text);
    shapes.set(text, hit);
    return hit;
  }
  try {
    checkJsonSchema(checked);
  } catch (cause) {
    throw new HttpError(400, "invalid_request_error", `${what} is not a valid JSON Schema: ${(cause as Error).message}`);
  }
  const shape: Shape = { text };
  shapes.set(text, shape);
  shapeChars += text.length;
  while (shapes.size > MAX_SHAPES || shapeChars > MAX_SHAPE_CHARS) {
    const oldest = shapes.keys().next().value as string;
    shapes.delete(oldest);
    shapeChars -= oldest.length;
  }
  return shape;
}

/**
 * The shape's validator, compiled now if it was not. It is compiled from the text, a copy no
 * caller holds. The meta-schema passed, so what can still fail is rare (a `$ref` to nothing); it
 * is found when the tool is first called, and every call to it is refused naming the cause.
 */
function compiled(shape: Shape): { validate: Validate; failure?: string } {
  if (shape.compiled) return shape.compiled;
  try {
    shape.compiled = { validate: compileJsonSchema(JSON.parse(shape.text) as JSONSchema, { checked: true }) };
  } catch (cause) {
    const failure = (cause as Error).message;
    const issues = [{ path: "(root)", message: `the tool's parameters schema does not compile, so no call to it can be accepted: ${failure}` }];
    shape.compiled = { validate: () => ({ ok: false, issues }), failure };
  }
  return shape.compiled;
}

/** Each spec's definition: a list built from a request's specs (a forced tool's, one with `respond`) finds them made. */
const defOfSpec = new WeakMap<ToolSpec, AnyToolDef>();

function toolDef(spec: ToolSpec): AnyToolDef {
  const made = defOfSpec.get(spec);
  if (made) return made;
  const shape = shapeOf(spec.parameters, `tool "${spec.name}": parameters`);
  const validateArgs: Validate = (args) => compiled(shape).validate(args);
  const def = Object.freeze({ name: spec.name, description: spec.description, spec, prerequisites: [], validateArgs, execute: notExecutable });
  defOfSpec.set(spec, def);
  return def;
}

/**
 * The caller's `response_format` schema as a check, from the same shapes as the tool schemas.
 * Compiled at once: one schema per request, checked whenever the answer is text, and a schema ajv
 * cannot compile is the caller's 400 here like any malformed one.
 *
 * @example
 * responseSchemaCheck({ type: "object", required: ["a"] })({}).ok; // false
 */
export function responseSchemaCheck(schema: JSONSchema): AnyToolDef["validateArgs"] {
  const what = "response_format json_schema.schema";
  const check = compiled(shapeOf(schema, what));
  if (check.failure !== undefined) throw new HttpError(400, "invalid_request_error", `${what} is not a valid JSON Schema: ${check.failure}`);
  return check.validate;
}

/**
 * `$schema` names a draft ajv may not have loaded (zod emits 2020-12); the keywords tool
 * schemas use mean the same in every draft, so validation ignores the declaration.
 */
function withoutDialect(schema: JSONSchema): JSONSchema {
  if (!("$schema" in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/**
 * The tools as definitions by name (a frozen record with no prototype). The same list gives the
 * same record, so the proxy's up-front check and every attempt's judging share one (a list built
 * from it, with `respond` added, finds every shape cached); a list and its specs must not change
 * once passed here, which holds for a request's tools (built once from its body).
 * Throws the caller's 400 naming the first tool whose schema is not a JSON Schema.
 *
 * @example
 * requestToolDefs([{ name: "get_weather", description: "", parameters: { type: "object" } }]).get_weather.validateArgs({});
 */
export function requestToolDefs(specs: readonly ToolSpec[]): Record<string, AnyToolDef> {
  const known = defsOfList.get(specs);
  if (known) return known;
  // No prototype: a tool named "__proto__" or "toString" is an own key set by plain assignment,
  // which for thousands of tools costs a tenth of setOwn's or Object.fromEntries's defining.
  const defs = Object.create(null) as Record<string, AnyToolDef>;
  for (const spec of specs) defs[spec.name] = toolDef(spec);
  Object.freeze(defs);
  defsOfList.set(specs, defs);
  return defs;
}

/** Tools given their definitions in one turn when a request is taken in turns (about a millisecond of schema checks). */
export const TOOLS_PER_TURN = 256;

/**
 * requestToolDefs in turns: with `turn`, the definitions are made TOOLS_PER_TURN at a time and
 * `turn` is awaited between (src/proxy/intake.ts passes the event loop's next turn).
 *
 * @example
 * const defs = await prepareToolDefs(request.tools, () => new Promise((r) => setImmediate(r)));
 */
export async function prepareToolDefs(specs: readonly ToolSpec[], turn?: () => Promise<void>): Promise<Record<string, AnyToolDef>> {
  if (turn !== undefined && !defsOfList.has(specs)) {
    for (let start = 0; start + TOOLS_PER_TURN < specs.length; start += TOOLS_PER_TURN) {
      for (let i = start; i < start + TOOLS_PER_TURN; i++) toolDef(specs[i]!);
      await turn();
    }
  }
  return requestToolDefs(specs);
}
