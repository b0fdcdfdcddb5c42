/**
 * Arguments generated from a tool's parameter schema (the JSON Schema its spec carries), for
 * the schema-driven oracle: deterministic, readable (a string is named after its property) and
 * valid for the keywords below. A keyword that constrains values but is not among them fails
 * loud with SchemaOracleError naming the tool, the keyword and where it is.
 *
 * Handled: type (and type lists), enum, const, properties, required, additionalProperties,
 * min/maxProperties, items, prefixItems, min/maxItems, uniqueItems, min/maxLength, pattern
 * (when simple: pattern-sample.ts), format (common ones), minimum, maximum, exclusiveMinimum,
 * exclusiveMaximum, multipleOf, anyOf / oneOf (the first branch that can be generated), allOf
 * (when its parts do not overlap) and local $ref.
 */
import { SchemaOracleError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { setOwn } from "../core/set-own.js";
import type { JSONSchema } from "../core/tool.js";
import { canonicalJson } from "../guardrails/canonical-json.js";
import { compilePattern, samplePattern } from "./pattern-sample.js";

/** Keywords that constrain values and that this generator does not satisfy. */
const UNSUPPORTED = ["not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies", "patternProperties", "contains", "minContains", "maxContains", "$dynamicRef", "$recursiveRef"];

/** A valid value for each common `format` (zod emits a format, often with a pattern, for its string checks). */
const FORMAT_SAMPLES: Record<string, string> = {
  email: "user@example.com",
  "idn-email": "user@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
  "uri-reference": "https://example.com/",
  iri: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "12:00:00",
  duration: "P1D",
  ipv4: "127.0.0.1",
  ipv6: "::1",
  hostname: "example.com",
};

const MAX_DEPTH = 32;

interface Site {
  toolName: string;
  root: JSONSchema;
  /** Dotted path of the value being generated, "(root)" at the top. */
  path: string;
  /** What a string is named after: its property name. */
  label: string;
  /** Index of an array item, so uniqueItems gets distinct values. */
  variant: number;
  depth: number;
}

/**
 * Arguments for a tool from its parameter schema.
 *
 * @example
 * sampleArgs("get_weather", { type: "object", properties: { city: { type: "string" } }, required: ["city"] }); // { city: "city" }
 */
export function sampleArgs(toolName: string, schema: JSONSchema): Record<string, unknown> {
  const value = sample(schema, { toolName, root: schema, path: "(root)", label: "value", variant: 0, depth: 0 });
  if (!isPlainObject(value)) throw gap({ toolName, path: "(root)" }, "type", "the arguments must be an object");
  return value;
}

/**
 * A value for any JSON Schema (the generator behind sampleArgs, for tests of single keywords).
 *
 * @example
 * sampleValue({ type: "integer", minimum: 5 }); // 5
 */
export function sampleValue(schema: unknown, label = "value"): unknown {
  return sample(schema, { toolName: "(schema)", root: isPlainObject(schema) ? schema : {}, path: "(root)", label, variant: 0, depth: 0 });
}

function gap(site: Pick<Site, "toolName" | "path">, keyword: string, reason: string): SchemaOracleError {
  return new SchemaOracleError(site.toolName, keyword, site.path, reason);
}

const child = (site: Site, key: string | number, label = site.label): Site => ({
  ...site,
  path: site.path === "(root)" ? String(key) : `${site.path}.${key}`,
  label,
  variant: 0,
  depth: site.depth + 1,
});

function sample(schema: unknown, site: Site): unknown {
  if (site.depth > MAX_DEPTH) throw gap(site, "$ref", `nesting deeper than ${MAX_DEPTH} levels (a recursive schema with a required cycle?)`);
  if (schema === true || schema === undefined) return site.label;
  if (schema === false) throw gap(site, "false", "the schema accepts no value");
  if (!isPlainObject(schema)) throw gap(site, "schema", `not a schema: ${JSON.stringify(schema)}`);
  for (const keyword of UNSUPPORTED) if (Object.hasOwn(schema, keyword)) throw gap(site, keyword, "not supported");
  const resolved = flatten(schema, site);
  if (resolved !== schema) return sample(resolved, { ...site, depth: site.depth + 1 });
  if (Object.hasOwn(schema, "const")) return schema.const;
  if (Array.isArray(schema.enum)) {
    if (schema.enum.length === 0) throw gap(site, "enum", "an empty enum accepts no value");
    return schema.enum[site.variant % schema.enum.length];
  }
  const branches = Array.isArray(schema.anyOf) ? "anyOf" : Array.isArray(schema.oneOf) ? "oneOf" : undefined;
  if (branches) return sampleBranches(schema, branches, site);
  switch (typeOf(schema)) {
    case "null":
      return null;
    case "boolean":
      return site.variant % 2 === 0;
    case "integer":
      return sampleNumber(schema, true, site);
    case "number":
      return sampleNumber(schema, false, site);
    case "array":
      return sampleArray(schema, site);
    case "object":
      return sampleObject(schema, site);
    default:
      return sampleString(schema, site);
  }
}

/** `$ref` and `allOf` merged into the schema (siblings win), or the schema itself when it has neither. */
function flatten(schema: JSONSchema, site: Site): JSONSchema {
  if (typeof schema.$ref === "string") {
    const { $ref, ...rest } = schema;
    return { ...resolveRef($ref, site), ...rest };
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...merged } = schema;
    for (const part of allOf) {
      if (!isPlainObject(part)) throw gap(site, "allOf", "each part must be a schema object");
      for (const [key, value] of Object.entries(part)) {
        if (Object.hasOwn(merged, key) && canonicalJson(merged[key]) !== canonicalJson(value)) throw gap(site, "allOf", `its parts both constrain "${key}"`);
        setOwn(merged, key, value);
      }
    }
    return merged;
  }
  return schema;
}

function resolveRef(ref: string, site: Site): JSONSchema {
  if (!ref.startsWith("#")) throw gap(site, "$ref", `only local references are supported, got "${ref}"`);
  let at: unknown = site.root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    at = isPlainObject(at) && Object.hasOwn(at, key) ? at[key] : undefined;
  }
  if (!isPlainObject(at)) throw gap(site, "$ref", `"${ref}" does not resolve to a schema`);
  return at;
}

function sampleBranches(schema: JSONSchema, keyword: "anyOf" | "oneOf", site: Site): unknown {
  const { [keyword]: list, ...rest } = schema;
  let first: unknown;
  for (const branch of list as unknown[]) {
    try {
      return sample(isPlainObject(branch) ? { ...rest, ...branch } : branch, site);
    } catch (error) {
      if (!(error instanceof SchemaOracleError)) throw error;
      first ??= error;
    }
  }
  throw first ?? gap(site, keyword, "no branch");
}

/** The type to generate: the first non-null one listed, else what the keywords imply. */
function typeOf(schema: JSONSchema): string {
  const listed = Array.isArray(schema.type) ? (schema.type as unknown[]) : schema.type === undefined ? [] : [schema.type];
  if (listed.length > 0) return String(listed.find((t) => t !== "null") ?? listed[0]);
  const has = (...keys: string[]) => keys.some((k) => Object.hasOwn(schema, k));
  if (has("properties", "required", "additionalProperties", "minProperties", "maxProperties")) return "object";
  if (has("items", "prefixItems", "minItems", "maxItems", "uniqueItems")) return "array";
  if (has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")) return "number";
  return "string";
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function sampleString(schema: JSONSchema, site: Site): string {
  const min = num(schema.minLength) ?? 0;
  const max = num(schema.maxLength) ?? Infinity;
  if (min > max) throw gap(site, "minLength", `minLength ${min} is above maxLength ${max}`);
  const format = typeof schema.format === "string" && Object.hasOwn(FORMAT_SAMPLES, schema.format) ? schema.format : undefined;
  const named = site.label + (site.variant > 0 ? `-${site.variant + 1}` : "");
  const candidate = format ? FORMAT_SAMPLES[format]! : [...named.padEnd(min, "x")].slice(0, max).join("");
  const length = [...candidate].length;
  const fits = length >= min && length <= max;
  if (typeof schema.pattern !== "string") {
    if (!fits) throw gap(site, "format", `the ${format} sample "${candidate}" does not fit minLength ${min} / maxLength ${max}`);
    return candidate;
  }
  if (fits && compilePattern(schema.pattern)?.test(candidate)) return candidate;
  if (format) throw gap(site, "pattern", `the ${format} sample "${candidate}" does not match ${schema.pattern}`);
  const sampled = samplePattern(schema.pattern, { minLength: min, maxLength: max });
  if (sampled === undefined) throw gap(site, "pattern", `${schema.pattern} is not a simple pattern (literals, classes, groups, quantifiers)${min > 0 || max < Infinity ? " within the length bounds" : ""}`);
  return sampled;
}

function sampleNumber(schema: JSONSchema, integer: boolean, site: Site): number {
  let lo = num(schema.minimum) ?? -Infinity;
  let hi = num(schema.maximum) ?? Infinity;
  let loOpen = schema.exclusiveMinimum === true; // draft-04 booleans
  let hiOpen = schema.exclusiveMaximum === true;
  const exMin = num(schema.exclusiveMinimum);
  const exMax = num(schema.exclusiveMaximum);
  if (exMin !== undefined && exMin >= lo) [lo, loOpen] = [exMin, true];
  if (exMax !== undefined && exMax <= hi) [hi, hiOpen] = [exMax, true];
  const step = num(schema.multipleOf);
  if (step !== undefined && step <= 0) throw gap(site, "multipleOf", `must be positive, got ${step}`);
  const fits = (x: number) => (loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi) && (!integer || Number.isInteger(x)) && (step === undefined || Number.isInteger(x / step));
  const target = 1 + site.variant;
  const grain = step ?? (integer ? 1 : undefined);
  if (grain === undefined) {
    let x = Math.min(Math.max(target, lo), hi);
    if (!fits(x)) x = Number.isFinite(lo) && Number.isFinite(hi) ? (lo + hi) / 2 : Number.isFinite(lo) ? lo + 1 : hi - 1;
    if (fits(x)) return x;
  } else {
    // Whole multiples of the grain inside the bounds, nearest the target first.
    const kLo = Math.ceil(lo / grain);
    const kHi = Math.floor(hi / grain);
    const k0 = Math.min(Math.max(Math.round(target / grain), kLo), kHi);
    for (let i = 0; i < 64 && Number.isFinite(k0); i++) {
      for (const k of [k0 + i, k0 - i]) {
        const x = k * grain;
        if (fits(x)) return x;
      }
    }
  }
  const bounds = `${loOpen ? "(" : "["}${lo}, ${hi}${hiOpen ? ")" : "]"}`;
  const keyword = step !== undefined ? "multipleOf" : Number.isFinite(lo) ? "minimum" : "maximum";
  throw gap(site, keyword, `no ${integer ? "integer" : "number"} in ${bounds}${step !== undefined ? ` that is a multiple of ${step}` : ""}`);
}

function sampleArray(schema: JSONSchema, site: Site): unknown[] {
  // Draft-07 tuples give `items` as a list and the rest in `additionalItems`.
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  const min = num(schema.minItems) ?? 0;
  const max = num(schema.maxItems) ?? Infinity;
  if (min > max) throw gap(site, "minItems", `minItems ${min} is above maxItems ${max}`);
  // One item when none is required: what a model sends for a list it is asked for.
  const count = Math.min(Math.max(min, prefix.length > 0 ? prefix.length : 1), max);
  const items: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const itemSchema = i < prefix.length ? prefix[i] : rest;
    if (itemSchema === false) {
      if (i < min) throw gap(child(site, i), "items", `minItems ${min} needs more items than the schema allows`);
      break;
    }
    items.push(sample(itemSchema, { ...child(site, i), variant: i }));
  }
  if (schema.uniqueItems === true && new Set(items.map(canonicalJson)).size !== items.length) throw gap(site, "uniqueItems", `cannot generate ${items.length} distinct items`);
  return items;
}

function sampleObject(schema: JSONSchema, site: Site): Record<string, unknown> {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === "string") : [];
  const extra = schema.additionalProperties;
  const schemaOf = (key: string): unknown => {
    if (Object.hasOwn(properties, key)) return properties[key];
    if (extra === false) throw gap(child(site, key), "required", `"${key}" is required but additionalProperties is false and it is not among the properties`);
    return isPlainObject(extra) ? extra : true;
  };
  const keys = [...new Set(required)];
  const min = num(schema.minProperties) ?? 0;
  for (const key of Object.keys(properties)) if (keys.length < min && !keys.includes(key)) keys.push(key);
  for (let n = 1; keys.length < min && extra !== false; n++) if (!keys.includes(`key${n}`)) keys.push(`key${n}`);
  if (keys.length < min) throw gap(site, "minProperties", `needs ${min} properties; the schema allows ${keys.length}`);
  const max = num(schema.maxProperties) ?? Infinity;
  if (keys.length > max) throw gap(site, "maxProperties", `${keys.length} required properties but maxProperties is ${max}`);
  const out: Record<string, unknown> = {};
  for (const key of keys) setOwn(out, key, sample(schemaOf(key), child(site, key, key)));
  return out;
}
