/**
 * The request's tool definitions (issue 46): schemas shared by shape, checked when first seen,
 * compiled when first called, kept across requests, made once per tool list. Every test counts
 * the checks and compiles it caused (jsonSchemaWork) and never times anything. The shapes live
 * as long as the process, so each test makes schemas no other test has (a fresh property name).
 */
import { Ajv } from "ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unique, work } from "../support/schema-work.js";
import { jsonSchemaWork, type JSONSchema, type ToolSpec } from "../../src/core/tool.js";
import { HttpError } from "../../src/proxy-request/http-error.js";
import { prepareToolDefs, requestToolDefs, responseSchemaCheck, TOOLS_PER_TURN } from "../../src/proxy-request/request-tools.js";


/** Three shapes, as a harness's tools share a few: a path, a query with a limit, no arguments. */
function threeShapes(tag: string): JSONSchema[] {
  return [
    { type: "object", properties: { [`${tag}_path`]: { type: "string" } }, required: [`${tag}_path`], additionalProperties: false },
    { type: "object", properties: { [`${tag}_q`]: { type: "string" }, limit: { type: "integer", minimum: 1 } }, required: [`${tag}_q`] },
    { type: "object", properties: {}, description: tag },
  ];
}

/** `count` tools named t0, t1, ...; a body parsed again gives new objects, so each call builds new ones. */
const toolsOf = (count: number, schemaOf: (i: number) => JSONSchema): ToolSpec[] =>
  Array.from({ length: count }, (_, i) => ({ name: `t${i}`, description: `tool ${i}`, parameters: structuredClone(schemaOf(i)) }));

const distinct = (tag: string) => (i: number): JSONSchema => ({ type: "object", properties: { [`${tag}_${i}`]: { type: "string" } }, required: [`${tag}_${i}`] });

describe("shapes shared across tools and requests", () => {
  it("1,000 tools of 3 shapes are 3 checks; calls to all 1,000 compile 3 validators", () => {
    const shapes = threeShapes(unique());
    const tools = toolsOf(1_000, (i) => shapes[i % 3]!);
    const built = work(() => requestToolDefs(tools));
    expect(built).toMatchObject({ checked: 3, compiled: 0 });
    const called = work(() => Object.values(built.value).map((def) => def.validateArgs({}).ok));
    expect(called).toMatchObject({ checked: 0, compiled: 3 });
    // No arguments: the path and the query are required, the third shape takes anything.
    expect(called.value.slice(0, 3)).toEqual([false, false, true]);
  });

  it("the same tools in a second request (new objects, as a new body parses) check and compile nothing", () => {
    const shapes = threeShapes(unique());
    const first = requestToolDefs(toolsOf(1_000, (i) => shapes[i % 3]!));
    for (const def of Object.values(first)) def.validateArgs({});
    const second = work(() => requestToolDefs(toolsOf(1_000, (i) => shapes[i % 3]!)));
    expect(second).toMatchObject({ checked: 0, compiled: 0 });
    expect(work(() => Object.values(second.value).every((def) => def.validateArgs({ x: 1 }) !== undefined))).toMatchObject({ compiled: 0 });
  });

  it("2,000 tools of 2,000 shapes do not evict themselves: a second request checks none and recompiles nothing", () => {
    const tag = unique();
    const first = work(() => requestToolDefs(toolsOf(2_000, distinct(tag))));
    expect(first).toMatchObject({ checked: 2_000, compiled: 0 });
    // A call to every 100th tool: those are compiled once, by the first request.
    const sample = (defs: ReturnType<typeof requestToolDefs>) => Array.from({ length: 20 }, (_, k) => defs[`t${k * 100}`]!.validateArgs({ [`${tag}_${k * 100}`]: "x" }).ok);
    expect(work(() => sample(first.value))).toMatchObject({ compiled: 20, value: Array(20).fill(true) });
    const second = work(() => requestToolDefs(toolsOf(2_000, distinct(tag))));
    expect(second).toMatchObject({ checked: 0, compiled: 0 });
    expect(work(() => sample(second.value))).toMatchObject({ compiled: 0, value: Array(20).fill(true) });
  });

  it("a declared $schema and none are one shape", () => {
    const [shape] = threeShapes(unique());
    const plain = requestToolDefs([{ name: "a", description: "", parameters: shape! }]);
    plain.a!.validateArgs({});
    const declared = work(() => requestToolDefs([{ name: "b", description: "", parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", ...shape } }]));
    expect(declared).toMatchObject({ checked: 0, compiled: 0 });
    expect(work(() => declared.value.b!.validateArgs({}).ok)).toMatchObject({ compiled: 0, value: false });
  });
});

describe("one set of definitions per request", () => {
  it("the same tool list gives the same definitions; the list with `respond` added checks and compiles nothing of theirs again", () => {
    const tag = unique();
    const tools = toolsOf(50, distinct(tag));
    const defs = requestToolDefs(tools);
    expect(work(() => requestToolDefs(tools))).toMatchObject({ checked: 0, compiled: 0, value: defs });
    expect(Object.isFrozen(defs)).toBe(true);
    defs.t7!.validateArgs({});
    const respond: ToolSpec = { name: "respond", description: "", parameters: { type: "object", properties: { message: { type: "string" } } } };
    const offered = work(() => requestToolDefs([...tools, respond]));
    expect(offered.checked).toBeLessThanOrEqual(1); // respond's shape, unless another test saw it first
    expect(work(() => offered.value.t7!.validateArgs({ [`${tag}_7`]: "x" }))).toMatchObject({ compiled: 0, value: { ok: true } });
  });

  it("tools named __proto__ or toString are tools, not the record's prototype or its methods", () => {
    const defs = requestToolDefs(["__proto__", "toString"].map((name) => ({ name, description: "", parameters: { type: "object", required: [unique()] } })));
    expect(Object.keys(defs)).toEqual(["__proto__", "toString"]);
    expect(Object.getPrototypeOf(defs)).toBe(null);
    expect(defs.__proto__?.validateArgs({}).ok).toBe(false);
    expect(defs.toString?.name).toBe("toString");
  });
});

describe("validation is what the tool's own schema says", () => {
  /** ajv on an instance of its own per schema, as every schema was compiled before shapes were shared. */
  const alone = (schema: JSONSchema) => {
    const check = new Ajv({ allErrors: true, strict: false, logger: false }).compile(schema);
    return (args: unknown) => (check(args) ? [] : (check.errors ?? []).map((e) => e.message));
  };

  it("tools sharing a shape answer every argument object as their schema alone would", () => {
    const tag = unique();
    const schema: JSONSchema = {
      type: "object",
      properties: { [tag]: { type: "string", minLength: 2, pattern: "^[a-z]+$" }, n: { type: "integer", maximum: 9 }, mode: { enum: ["a", "b"] }, list: { type: "array", items: { type: "number" } } },
      required: [tag, "n"],
      additionalProperties: false,
    };
    const defs = requestToolDefs(toolsOf(3, () => schema));
    const reference = alone(schema);
    const value = fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -2, max: 12 }), fc.constantFrom("a", "b", "c"), fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 3 }), fc.constant(null));
    const args = fc.dictionary(fc.constantFrom(tag, "n", "mode", "list", "other"), value);
    fc.assert(
      fc.property(args, fc.constantFrom("t0", "t1", "t2"), (a, name) => {
        const result = defs[name]!.validateArgs(a);
        expect(result.ok ? [] : result.issues.map((i) => i.message)).toEqual(reference(a));
      }),
      { numRuns: 300 },
    );
  });
});

describe("schemas the caller got wrong", () => {
  const refused = (fn: () => unknown): HttpError => {
    try {
      fn();
    } catch (error) {
      if (error instanceof HttpError) return error;
      throw error;
    }
    throw new Error("not refused");
  };

  it("a malformed schema is the caller's 400 naming the tool, and nothing is compiled", () => {
    const tools = [...toolsOf(10, distinct(unique())), { name: "bad", description: "", parameters: { type: "object", properties: { a: { type: "nope" } } } }];
    const counted = work(() => refused(() => requestToolDefs(tools)));
    expect(counted.value.status).toBe(400);
    expect(counted.value.message).toMatch(/^tool "bad": parameters is not a valid JSON Schema: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/);
    expect(counted.compiled).toBe(0);
  });

  it("so is a pattern that is no regular expression, though nothing is compiled up front", () => {
    const tools = [{ name: "grep", description: "", parameters: { type: "object", properties: { [unique()]: { type: "string", pattern: "([a-z]" } } } }];
    expect(refused(() => requestToolDefs(tools)).message).toMatch(/^tool "grep": parameters is not a valid JSON Schema: .*must match format "regex"/);
  });

  it("a schema that passes the meta-schema but does not compile refuses every call to its tool naming why, compiled once", () => {
    const defs = requestToolDefs([{ name: "linked", description: "", parameters: { type: "object", properties: { [unique()]: { $ref: "#/$defs/missing" } } } }]);
    const first = work(() => defs.linked!.validateArgs({}));
    expect(first.compiled).toBe(1);
    expect(first.value).toEqual({ ok: false, issues: [{ path: "(root)", message: expect.stringMatching(/does not compile, so no call to it can be accepted: can't resolve reference #\/\$defs\/missing/) }] });
    expect(work(() => defs.linked!.validateArgs({ a: 1 }))).toMatchObject({ compiled: 0, value: { ok: false } });
  });

  it("a response_format schema is compiled at once, so one that does not compile is the caller's 400", () => {
    const error = refused(() => responseSchemaCheck({ type: "object", properties: { [unique()]: { $ref: "#/$defs/missing" } } }));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^response_format json_schema.schema is not a valid JSON Schema: can't resolve reference/);
    expect(responseSchemaCheck({ type: "object", required: [unique()] })({}).ok).toBe(false);
  });
});

describe("definitions made in turns (a large request yields between them)", () => {
  it("1,000 new tools: at most TOOLS_PER_TURN schemas checked between two turns, the same record as in one go", async () => {
    const tag = unique();
    const tools = toolsOf(1_000, distinct(tag));
    const before = jsonSchemaWork().checked;
    const checkedAtTurn: number[] = [];
    const defs = await prepareToolDefs(tools, async () => {
      checkedAtTurn.push(jsonSchemaWork().checked - before);
    });
    expect(checkedAtTurn).toEqual([256, 512, 768]); // ceil(1000 / 256) - 1 turns
    expect(TOOLS_PER_TURN).toBe(256);
    expect(defs).toBe(requestToolDefs(tools));
    expect(Object.keys(defs)).toHaveLength(1_000);
    expect(defs.t999!.validateArgs({ [`${tag}_999`]: "x" }).ok).toBe(true);
  });

  it("a malformed schema past the first turn is still the caller's 400, naming the tool", async () => {
    const tools = toolsOf(600, distinct(unique()));
    tools[550] = { name: "broken", description: "", parameters: { type: "object", properties: { a: { type: 12 } } } as unknown as JSONSchema };
    const failure = await prepareToolDefs(tools, () => Promise.resolve()).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(HttpError);
    expect((failure as HttpError).message).toMatch(/tool "broken": parameters is not a valid JSON Schema/);
  });

  it("a list already made takes no turn; without a turn function none is taken", async () => {
    const tools = toolsOf(600, distinct(unique()));
    let turns = 0;
    await prepareToolDefs(tools);
    await prepareToolDefs(tools, async () => void turns++);
    expect(turns).toBe(0);
  });

  it("a list built from a request's specs (respond added, one forced tool) reuses their definitions", () => {
    const tools = toolsOf(50, distinct(unique()));
    const defs = requestToolDefs(tools);
    const withRespond = work(() => requestToolDefs([...tools, { name: "respond", description: "", parameters: { type: "object", properties: { [unique()]: { type: "string" } } } }]));
    expect(withRespond.checked).toBe(1);
    expect(withRespond.value.t7).toBe(defs.t7);
    expect(requestToolDefs([tools[3]!]).t3).toBe(defs.t3);
  });
});
