/**
 * compileJsonSchema and checkJsonSchema on shared ajv instances (issue 46): what one instance per
 * schema used to guarantee still holds, and the work each call does is counted, not timed.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { unique, work } from "../support/schema-work.js";
import { checkJsonSchema, compileJsonSchema, type JSONSchema } from "../../src/core/tool.js";


/** What ajv alone says, on an instance of its own (how every schema was compiled before). */
function ajvAlone(schema: JSONSchema): string {
  try {
    new Ajv({ allErrors: true, strict: false, logger: false }).compile(schema);
    return "compiles";
  } catch (error) {
    return (error as Error).message;
  }
}

describe("compileJsonSchema on a shared instance", () => {
  it("two schemas with the same $id compile side by side, each validating by its own rules", () => {
    const $id = `https://example.com/${unique()}`;
    const needsA = compileJsonSchema({ $id, type: "object", required: ["a"] });
    const needsB = compileJsonSchema({ $id, type: "object", required: ["b"] });
    expect(needsA({ a: 1 }).ok).toBe(true);
    expect(needsB({ a: 1 }).ok).toBe(false);
  });

  it("a schema that refers to itself by its $id resolves", () => {
    const $id = `https://example.com/${unique()}`;
    const tree = compileJsonSchema({ $id, type: "object", properties: { child: { $ref: $id } }, required: ["name"] });
    expect(tree({ name: "root", child: { name: "leaf" } }).ok).toBe(true);
    expect(tree({ name: "root", child: {} })).toEqual({ ok: false, issues: [{ path: "child.name", message: "must have required property 'name'" }] });
  });

  it("validators compiled long before keep working after hundreds of others were compiled", () => {
    const first = compileJsonSchema({ type: "object", properties: { n: { type: "integer" } }, required: ["n"] });
    for (let i = 0; i < 600; i++) compileJsonSchema({ type: "object", required: [unique()] });
    expect(first({ n: 1 }).ok).toBe(true);
    expect(first({ n: "one" })).toEqual({ ok: false, issues: [{ path: "n", message: "must be integer" }] });
  });

  it("counts one check and one compile per call; none when the caller says it checked", () => {
    expect(work(() => compileJsonSchema({ type: "object", required: [unique()] }))).toMatchObject({ checked: 1, compiled: 1 });
    expect(work(() => compileJsonSchema({ type: "object", required: [unique()] }, { checked: true }))).toMatchObject({ checked: 0, compiled: 1 });
  });
});

describe("checkJsonSchema", () => {
  it.each([
    { type: "nope" },
    { type: "object", properties: { a: { type: "nope" } } },
    { type: "object", required: "a" },
    { type: "object", properties: { a: { enum: "x" } } },
  ])("refuses %j with ajv's own complaint, and compiles nothing", (schema) => {
    const counted = work(() => {
      try {
        checkJsonSchema(schema);
        return "passed";
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(counted.value).toBe(ajvAlone(schema));
    expect(counted.value).toMatch(/^schema is invalid: data/);
    expect(counted).toMatchObject({ checked: 1, compiled: 0 });
  });

  it("refuses a pattern or a patternProperties key that is no regular expression (with the u flag, as ajv compiles them)", () => {
    expect(() => checkJsonSchema({ type: "object", properties: { a: { type: "string", pattern: "(" } } })).toThrow(/data\/properties\/a\/pattern must match format "regex"/);
    expect(() => checkJsonSchema({ type: "object", properties: { a: { type: "string", pattern: "\\-" } } })).toThrow(/must match format "regex"/);
    expect(() => checkJsonSchema({ type: "object", patternProperties: { "(": {} } })).toThrow(/patternProperties/);
    expect(() => checkJsonSchema({ type: "object", properties: { a: { type: "string", pattern: "^[a-z]+$" } } })).not.toThrow();
  });

  it("leaves `format: regex` in a tool's own schema alone: an argument is not checked as a regex", () => {
    expect(compileJsonSchema({ type: "object", properties: { a: { type: "string", format: "regex" } } })({ a: "(" }).ok).toBe(true);
  });

  it("judges a declared dialect as ajv does: one it has not loaded is refused", () => {
    expect(() => checkJsonSchema({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" })).toThrow(/no schema with key or ref/);
    expect(() => checkJsonSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "object" })).not.toThrow();
  });

  it("passes a schema whose $ref points at nothing: only compiling finds that", () => {
    const schema = { type: "object", properties: { a: { $ref: "#/$defs/missing" } } };
    expect(() => checkJsonSchema(schema)).not.toThrow();
    expect(() => compileJsonSchema(schema)).toThrow(/can't resolve reference #\/\$defs\/missing/);
  });
});
