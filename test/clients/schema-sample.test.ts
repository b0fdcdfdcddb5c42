import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sampleArgs, sampleValue } from "../../src/clients/schema-sample.js";
import { SchemaOracleError } from "../../src/core/errors.js";
import { compileJsonSchema, type JSONSchema } from "../../src/core/tool.js";

/** The tool-parameter wrapper every generated schema goes in, and ajv's verdict on what was sampled. */
const asArgs = (value: unknown): JSONSchema => ({ type: "object", properties: { v: value }, required: ["v"], additionalProperties: false });
const ajvAccepts = (schema: JSONSchema, args: unknown) => compileJsonSchema(schema)(args);

function gapOf(schema: unknown): SchemaOracleError {
  try {
    sampleArgs("pick", schema as JSONSchema);
  } catch (error) {
    if (error instanceof SchemaOracleError) return error;
    throw error;
  }
  throw new Error("expected a SchemaOracleError");
}

describe("sampleArgs / sampleValue", () => {
  it("names strings after their property and keeps only required properties", () => {
    const schema = { type: "object", properties: { city: { type: "string" }, units: { type: "string" } }, required: ["city"] };
    expect(sampleArgs("get_weather", schema)).toEqual({ city: "city" });
  });

  it.each([
    [{ type: "integer", minimum: 5 }, 5],
    [{ type: "integer", exclusiveMinimum: 0 }, 1],
    [{ type: "integer", maximum: -3 }, -3],
    [{ type: "integer", minimum: 5, maximum: 5, exclusiveMinimum: true }, undefined],
    [{ type: "number", exclusiveMinimum: 1, exclusiveMaximum: 2 }, 1.5],
    [{ type: "number", minimum: 1, exclusiveMinimum: true }, 2],
    [{ type: "number", multipleOf: 0.1, minimum: 0.25 }, 1],
    [{ type: "integer", multipleOf: 7, minimum: 10, maximum: 20 }, 14],
    [{ type: "string", minLength: 8 }, "valuexxx"],
    [{ type: "string", maxLength: 2 }, "va"],
    [{ type: "string", format: "email" }, "user@example.com"],
    [{ type: "string", pattern: "^SKU-[0-9]{3}$" }, "SKU-000"],
    [{ enum: ["b", "a"] }, "b"],
    [{ const: { k: [1] } }, { k: [1] }],
    [{ type: ["null", "boolean"] }, true],
    [{ anyOf: [{ not: {} }, { type: "null" }] }, null],
    [{ type: "array", items: { type: "string" }, minItems: 2, uniqueItems: true }, ["value", "value-2"]],
    [{ type: "array", items: [{ type: "string" }, { type: "integer" }], additionalItems: false }, ["value", 2]],
    [{ type: "object", minProperties: 2, properties: { a: { type: "boolean" } } }, { a: true, key1: "key1" }],
    [{ allOf: [{ type: "string" }, { minLength: 6 }] }, "valuex"],
    [{}, "value"],
  ])("%j → %j", (schema, expected) => {
    if (expected === undefined) return expect(() => sampleValue(schema)).toThrow(SchemaOracleError);
    expect(sampleValue(schema)).toEqual(expected);
  });

  it("follows local references, recursive ones included", () => {
    const node: z.ZodType = z.lazy(() => z.object({ name: z.string(), children: z.array(node).optional() }));
    const schema = z.toJSONSchema(z.object({ root: node, other: z.object({ id: z.int() }) }), { io: "input" }) as JSONSchema;
    expect(sampleArgs("tree", schema)).toEqual({ root: { name: "name" }, other: { id: 1 } });
    expect(sampleValue({ $defs: { Id: { type: "integer", minimum: 3 } }, type: "object", properties: { id: { $ref: "#/$defs/Id" } }, required: ["id"] })).toEqual({ id: 3 });
  });

  it.each([
    [{ type: "object", properties: { x: { not: { type: "string" } } }, required: ["x"] }, "not", "x"],
    [{ type: "object", properties: { x: { type: "object", properties: { y: { if: {}, then: {} } }, required: ["y"] } }, required: ["x"] }, "if", "x.y"],
    [{ type: "object", patternProperties: { "^a": {} } }, "patternProperties", "(root)"],
    [asArgs({ type: "string", pattern: "^(?=a)a+$" }), "pattern", "v"],
    [asArgs({ type: "string", format: "email", pattern: "^[0-9]+$" }), "pattern", "v"],
    [asArgs({ type: "integer", minimum: 3, maximum: 2 }), "minimum", "v"],
    [asArgs({ type: "integer", minimum: 1, maximum: 2, multipleOf: 5 }), "multipleOf", "v"],
    [asArgs({ type: "string", minLength: 4, maxLength: 2 }), "minLength", "v"],
    [asArgs({ type: "array", items: { enum: ["a"] }, minItems: 2, uniqueItems: true }), "uniqueItems", "v"],
    [asArgs({ allOf: [{ pattern: "^a" }, { pattern: "b$" }] }), "allOf", "v"],
    [asArgs({ $ref: "https://example.com/schema" }), "$ref", "v"],
    [asArgs({ enum: [] }), "enum", "v"],
    [{ type: "object", required: ["x"], additionalProperties: false }, "required", "x"],
    [{ type: "object", properties: { n: { $ref: "#" } }, required: ["n"] }, "$ref", "n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n"],
  ])("fails loud on %j: keyword %s at %s, naming the tool", (schema, keyword, path) => {
    const error = gapOf(schema);
    expect(error.keyword).toBe(keyword);
    expect(error.toolName).toBe("pick");
    expect(error.path.startsWith(path)).toBe(true);
    expect(error.message).toMatch(/^Tool "pick": the schema-driven oracle cannot generate arguments/);
    expect(error.code).toBe("FORGE_SCHEMA_ORACLE");
  });

  it("finds a multiple that survives floating point division", () => {
    const schema = asArgs({ type: "number", multipleOf: 0.1, minimum: 1.25 });
    const args = sampleArgs("t", schema);
    expect(ajvAccepts(schema, args)).toMatchObject({ ok: true });
    expect(z.object({ v: z.number().multipleOf(0.1).min(1.25) }).safeParse(args).success).toBe(true);
  });

  it("is deterministic", () => {
    const schema = z.toJSONSchema(z.object({ a: z.array(z.object({ b: z.uuid(), c: z.number().lt(-2) })).min(3) }), { io: "input" }) as JSONSchema;
    expect(sampleArgs("t", schema)).toEqual(sampleArgs("t", structuredClone(schema)));
  });
});

// A satisfiable JSON Schema of the supported keyword set, built so that every keyword can hold.
const FORMATS = ["email", "uri", "uuid", "date-time", "date", "ipv4", "hostname"];
const PATTERNS = ["^[A-Z]{2}-\\d{3,5}$", "^[a-z_][a-z0-9_]*$", "ab+c", "^(?:yes|no)$", "^\\w+\\.txt$", "^[^\\s]{2,}$"];
const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const stringSchema = fc.oneof(
  fc.record({ type: fc.constant("string") }),
  fc.tuple(fc.nat(6), fc.nat(6)).map(([min, extra]) => ({ type: "string", minLength: min, maxLength: min + extra })),
  fc.constantFrom(...FORMATS).map((format) => ({ type: "string", format })),
  fc.constantFrom(...PATTERNS).map((pattern) => ({ type: "string", pattern })),
);
const integerSchema = fc
  .record({ lo: fc.integer({ min: -1000, max: 1000 }), width: fc.nat(40), step: fc.constantFrom(undefined, 2, 3, 5), exLo: fc.boolean(), exHi: fc.boolean(), open: fc.constantFrom("both", "lo", "hi", "none") })
  .map(({ lo, width, step, exLo, exHi, open }) => {
    const hi = lo + width + (step ?? 1) + 2; // room for a multiple strictly inside
    return {
      type: "integer",
      ...(open === "both" || open === "lo" ? (exLo ? { exclusiveMinimum: lo } : { minimum: lo }) : {}),
      ...(open === "both" || open === "hi" ? (exHi ? { exclusiveMaximum: hi } : { maximum: hi }) : {}),
      ...(step ? { multipleOf: step } : {}),
    };
  });
const numberSchema = fc
  .record({ lo: fc.double({ min: -1e6, max: 1e6, noNaN: true }), width: fc.double({ min: 0.01, max: 1e3, noNaN: true }), step: fc.constantFrom(undefined, 0.25, 0.5, 10), exLo: fc.boolean(), exHi: fc.boolean() })
  .map(({ lo, width, step, exLo, exHi }) => {
    const hi = lo + width + (step ?? 0) * 3;
    return { type: "number", ...(exLo ? { exclusiveMinimum: lo } : { minimum: lo }), ...(exHi ? { exclusiveMaximum: hi } : { maximum: hi }), ...(step ? { multipleOf: step } : {}) };
  });
const leaf = fc.oneof(
  stringSchema,
  integerSchema,
  numberSchema,
  fc.constant({ type: "boolean" }),
  fc.constant({ type: "null" }),
  fc.uniqueArray(json, { minLength: 1, maxLength: 4, selector: (v) => JSON.stringify(v) }).map((values) => ({ enum: values })),
  json.map((value) => ({ const: value })),
);
const { schema: anySchema } = fc.letrec<{ schema: JSONSchema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({ items: tie("schema"), min: fc.nat(3), extra: fc.nat(3) }).map(({ items, min, extra }) => ({ type: "array", items, minItems: min, maxItems: min + extra })),
    fc.nat(4).map((min) => ({ type: "array", items: { type: "string" }, minItems: min, uniqueItems: true })),
    // Tuples as draft-07 writes them: ajv, which validates raw JSON Schema tools, reads that draft.
    fc.array(tie("schema"), { minLength: 1, maxLength: 3 }).map((items) => ({ type: "array", items, additionalItems: false, minItems: items.length })),
    fc
      .record({ props: fc.dictionary(fc.stringMatching(/^[a-z][a-z_]{0,7}$/), tie("schema"), { maxKeys: 4 }), closed: fc.boolean(), pick: fc.nat() })
      .map(({ props, closed, pick }) => {
        const keys = Object.keys(props);
        return { type: "object", properties: props, required: keys.filter((_, i) => (pick >> i) & 1), ...(closed ? { additionalProperties: false } : {}) };
      }),
    fc.tuple(tie("schema"), tie("schema")).map((anyOf) => ({ anyOf })),
    stringSchema.map((s) => ({ ...s, type: ["string", "null"] })),
  ),
}));

// CPU-bound (about 7 s on an idle core): the deadline is for a hang, not a speed test.
describe("sampled values validate (property)", { timeout: 600_000 }, () => {
  it("for generated JSON Schemas of the supported keywords, ajv accepts the sample", () => {
    fc.assert(
      fc.property(anySchema, (schema) => {
        const args = sampleArgs("t", asArgs(schema));
        const verdict = ajvAccepts(asArgs(schema), args);
        expect(verdict, JSON.stringify({ schema, args })).toMatchObject({ ok: true });
      }),
      { numRuns: 400, seed: 32 },
    );
  });

  // zod schemas: the JSON Schema a tool spec carries is zod's own rendering, and zod judges the sample.
  const zodLeaf = fc.oneof(
    fc.tuple(fc.nat(5), fc.nat(5)).map(([min, extra]) => z.string().min(min).max(min + extra)),
    fc.constantFrom(z.email(), z.uuid(), z.url(), z.iso.datetime(), z.iso.date(), z.ipv4(), z.string().regex(/^PN-\d{4}$/), z.string().includes("mid"), z.string().lowercase()),
    fc.tuple(fc.integer({ min: -50, max: 50 }), fc.nat(20)).map(([min, width]) => z.int().min(min).max(min + width)),
    fc.constantFrom(z.number().positive(), z.number().negative(), z.number().multipleOf(0.5).gte(3), z.int().nonnegative(), z.number().lt(-0.5)),
    fc.constant(z.boolean()),
    fc.constant(z.enum(["small", "large"])),
    fc.constant(z.literal("exact")),
  );
  const { zod } = fc.letrec<{ zod: z.ZodType }>((tie) => ({
    zod: fc.oneof(
      { depthSize: "small" },
      zodLeaf,
      fc.record({ item: tie("zod"), min: fc.nat(3) }).map(({ item, min }) => z.array(item).min(min)),
      fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie("zod"), { maxKeys: 3 }).map((shape) => z.object(shape)),
      tie("zod").map((s) => s.optional()),
      tie("zod").map((s) => s.nullable()),
      fc.tuple(tie("zod"), tie("zod")).map(([a, b]) => z.union([a, b])),
      fc.tuple(tie("zod"), tie("zod")).map(([a, b]) => z.tuple([a, b])),
    ),
  }));

  it("for generated zod schemas, zod accepts the sample of their JSON Schema", () => {
    fc.assert(
      fc.property(zod, (schema) => {
        const params = z.object({ v: schema });
        const args = sampleArgs("t", z.toJSONSchema(params, { io: "input" }) as JSONSchema);
        const parsed = params.safeParse(args);
        expect(parsed.success, JSON.stringify({ args, issues: parsed.error?.issues })).toBe(true);
      }),
      { numRuns: 300, seed: 32 },
    );
  });
});
