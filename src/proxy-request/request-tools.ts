/**
 * The caller's tool schemas as validator tool definitions. Harnesses send the same tools on
 * every request, and compiling a JSON Schema costs far more than validating with it, so the
 * compiled validators are kept in a bounded cache keyed by name and schema text.
 */
import { compileJsonSchema, type AnyToolDef, type JSONSchema, type ToolSpec } from "../core/tool.js";
import { HttpError } from "./http-error.js";

const MAX_CACHED = 512;
const cache = new Map<string, AnyToolDef>();

function notExecutable(): never {
  throw new Error("the proxy never executes tools: the caller does");
}

function toolDef(spec: ToolSpec): AnyToolDef {
  return cached(`${spec.name}\u0000${JSON.stringify(spec.parameters)}`, () => {
    const validateArgs = compiled(spec.parameters, `tool "${spec.name}": parameters`);
    return Object.freeze({ name: spec.name, description: spec.description, spec, prerequisites: [], validateArgs, execute: notExecutable });
  });
}

function cached(key: string, make: () => AnyToolDef): AnyToolDef {
  const hit = cache.get(key);
  if (hit) {
    // Refresh recency: Map iteration order is insertion order, so the oldest entry goes first.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const def = make();
  cache.set(key, def);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
  return def;
}

function compiled(schema: JSONSchema, what: string): AnyToolDef["validateArgs"] {
  try {
    return compileJsonSchema(withoutDialect(schema));
  } catch (cause) {
    throw new HttpError(400, "invalid_request_error", `${what} is not a valid JSON Schema: ${(cause as Error).message}`);
  }
}

/**
 * The caller's `response_format` schema as a check, from the same cache as the tool schemas.
 *
 * @example
 * responseSchemaCheck({ type: "object", required: ["a"] })({}).ok; // false
 */
export function responseSchemaCheck(schema: JSONSchema): AnyToolDef["validateArgs"] {
  const spec: ToolSpec = { name: "response_format", description: "", parameters: schema };
  return cached(`\u0000response_format\u0000${JSON.stringify(schema)}`, () =>
    Object.freeze({ name: spec.name, description: "", spec, prerequisites: [], validateArgs: compiled(schema, "response_format json_schema.schema"), execute: notExecutable }),
  ).validateArgs;
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
 * @example
 * requestToolDefs([{ name: "get_weather", description: "", parameters: { type: "object" } }]).get_weather.validateArgs({});
 */
export function requestToolDefs(specs: readonly ToolSpec[]): Record<string, AnyToolDef> {
  const defs: Record<string, AnyToolDef> = {};
  for (const spec of specs) defs[spec.name] = toolDef(spec);
  return defs;
}
