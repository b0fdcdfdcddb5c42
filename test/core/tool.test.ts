import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForgeError, ToolDefinitionError } from "../../src/core/errors.js";
import { defineTool, formatArgIssues, prerequisiteName, type ToolExecuteContext } from "../../src/core/tool.js";

const ctx: ToolExecuteContext = { signal: new AbortController().signal, idempotencyKey: "run:1:0", runId: "run", iteration: 1, callIndex: 0 };
const noop = () => "ok";

/** Run `fn`, return the ToolDefinitionError it throws (fails the test otherwise). */
function definitionError(fn: () => unknown): ToolDefinitionError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ToolDefinitionError);
    expect(ForgeError.isInstance(e)).toBe(true);
    return e as ToolDefinitionError;
  }
  throw new Error("expected a ToolDefinitionError, nothing was thrown");
}

describe("defineTool with zod parameters", () => {
  const weather = defineTool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({
      city: z.string().describe("City name"),
      units: z.enum(["c", "f"]).default("c"),
      days: z.number().int().min(1).optional(),
    }),
    execute: ({ city, units }) => `21${units} in ${city}`,
  });

  it("exposes name, description and a frozen definition", () => {
    expect(weather.name).toBe("get_weather");
    expect(weather.description).toBe("Current weather for a city");
    expect(weather.prerequisites).toEqual([]);
    expect(Object.isFrozen(weather)).toBe(true);
  });

  it("derives the JSON Schema from the input side (defaults optional) without $schema", () => {
    const params = weather.spec.parameters;
    expect(weather.spec.name).toBe("get_weather");
    expect(weather.spec.description).toBe("Current weather for a city");
    expect(params).not.toHaveProperty("$schema");
    expect(params.type).toBe("object");
    expect(params.required).toEqual(["city"]);
    expect(params.properties).toMatchObject({
      city: { type: "string", description: "City name" },
      units: { type: "string", enum: ["c", "f"], default: "c" },
      days: { type: "integer", minimum: 1 },
    });
    expect(JSON.parse(JSON.stringify(params))).toEqual(params);
  });

  it("validateArgs returns the parsed value with defaults applied", () => {
    expect(weather.validateArgs({ city: "Paris" })).toEqual({ ok: true, value: { city: "Paris", units: "c" } });
    expect(weather.validateArgs({ city: "Oslo", units: "f", days: 2 })).toEqual({ ok: true, value: { city: "Oslo", units: "f", days: 2 } });
  });

  it("issues name the field path", () => {
    const r = weather.validateArgs({ city: 5, units: "k" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual(["city", "units"]);
    for (const i of r.issues) expect(i.message.length).toBeGreaterThan(0);
  });

  it("nested paths are dotted and array indices included; a non-object is (root)", () => {
    const t = defineTool({
      name: "ship",
      description: "",
      parameters: z.object({ address: z.object({ zip: z.string() }), items: z.array(z.object({ sku: z.string() })) }),
      execute: noop,
    });
    const r = t.validateArgs({ address: {}, items: [{ sku: "a" }, { sku: 1 }] });
    expect(r.ok ? [] : r.issues.map((i) => i.path).sort()).toEqual(["address.zip", "items.1.sku"]);
    const root = t.validateArgs("not an object");
    expect(root.ok ? [] : root.issues.map((i) => i.path)).toEqual(["(root)"]);
  });

  it("property: any string city validates and comes back unchanged with the default", () => {
    fc.assert(
      fc.property(fc.string(), (city) => {
        expect(weather.validateArgs({ city })).toEqual({ ok: true, value: { city, units: "c" } });
      }),
      { numRuns: 100 },
    );
  });

  it("property: a non-string city is always rejected on path city", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())), (city) => {
        const r = weather.validateArgs({ city });
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.issues.map((i) => i.path)).toContain("city");
      }),
      { numRuns: 50 },
    );
  });

  it("z.object({}) is a valid no-argument tool", () => {
    const t = defineTool({ name: "now", description: "time", parameters: z.object({}), execute: () => 0 });
    expect(t.spec.parameters).toMatchObject({ type: "object", properties: {} });
    expect(t.validateArgs({}).ok).toBe(true);
  });

  it("rejects a non-object zod schema, a non-zod value and an inexpressible schema", () => {
    const nonObject = definitionError(() =>
      defineTool({ name: "s", description: "", parameters: z.string() as never, execute: noop }),
    );
    expect(nonObject.message).toContain("z.object");
    expect(nonObject.toolName).toBe("s");
    expect(definitionError(() => defineTool({ name: "p", description: "", parameters: { type: "object" } as never, execute: noop })).message).toContain("zod");
    const inexpressible = definitionError(() =>
      defineTool({ name: "d", description: "", parameters: z.object({ when: z.date() }), execute: noop }),
    );
    expect(inexpressible.message).toContain("JSON Schema");
    expect(inexpressible.cause).toBeDefined();
  });
});

describe("defineTool with a raw jsonSchema", () => {
  const schema = {
    type: "object",
    properties: { path: { type: "string" }, limit: { type: "integer", minimum: 1 } },
    required: ["path"],
    additionalProperties: false,
  };
  const read = defineTool({ name: "read_file", description: "Read a file", jsonSchema: schema, execute: (args) => `read ${String(args.path)}` });

  it("uses a copy of the schema as spec.parameters", () => {
    expect(read.spec.parameters).toEqual(schema);
    expect(read.spec.parameters).not.toBe(schema);
  });

  it("validates with ajv and returns the args as value", () => {
    expect(read.validateArgs({ path: "/tmp/x", limit: 3 })).toEqual({ ok: true, value: { path: "/tmp/x", limit: 3 } });
  });

  it("names a missing property, a wrongly typed one, and reports all errors", () => {
    const missing = read.validateArgs({});
    expect(missing.ok ? [] : missing.issues).toEqual([{ path: "path", message: expect.stringContaining("path") }]);
    const bad = read.validateArgs({ path: 1, limit: 0 });
    expect(bad.ok ? [] : bad.issues.map((i) => i.path).sort()).toEqual(["limit", "path"]);
    const notObject = read.validateArgs([1]);
    expect(notObject.ok ? [] : notObject.issues.map((i) => i.path)).toEqual(["(root)"]);
  });

  it("dots nested instance paths", () => {
    const t = defineTool({
      name: "nested",
      description: "",
      jsonSchema: { type: "object", properties: { a: { type: "object", properties: { b: { type: "number" } } } } },
      execute: noop,
    });
    const r = t.validateArgs({ a: { b: "x" } });
    expect(r.ok ? [] : r.issues.map((i) => i.path)).toEqual(["a.b"]);
  });

  it("a malformed schema is a ToolDefinitionError carrying ajv's complaint", () => {
    const e = definitionError(() =>
      defineTool({ name: "broken", description: "", jsonSchema: { type: "object", properties: { a: { type: "nope" } } }, execute: noop }),
    );
    expect(e.message).toContain('Tool "broken": malformed jsonSchema');
    expect(e.cause).toBeInstanceOf(Error);
    expect(definitionError(() => defineTool({ name: "b2", description: "", jsonSchema: { type: "object", required: "a" }, execute: noop })).message).toContain(
      "malformed",
    );
  });

  it("a non-object schema is rejected", () => {
    for (const bad of [{ type: "string" }, {}, [], null]) {
      const e = definitionError(() => defineTool({ name: "x", description: "", jsonSchema: bad as never, execute: noop }));
      expect(e.message).toContain('type: "object"');
    }
  });
});

describe("defineTool argument checks", () => {
  const base = { description: "d", parameters: z.object({}), execute: noop };

  it.each([[""], ["1abc"], ["has space"], ["a".repeat(65)], ["semi;colon"], [undefined], [42]])("rejects name %j", (name) => {
    const e = definitionError(() => defineTool({ ...base, name: name as string }));
    expect(e.message).toContain("name must match");
  });

  it("accepts names with letters, digits, _, . and - up to 64 chars", () => {
    for (const name of ["a", "_x", "get_weather", "ns.tool-v2", "A".repeat(64)]) expect(defineTool({ ...base, name }).name).toBe(name);
  });

  it("property: generated valid names are accepted", () => {
    const head = fc.constantFrom(..."abcXYZ_".split(""));
    const tail = fc.string({ unit: fc.constantFrom(..."az09_.-Q".split("")), maxLength: 63 });
    fc.assert(
      fc.property(head, tail, (h, t) => {
        expect(defineTool({ ...base, name: h + t }).spec.name).toBe(h + t);
      }),
      { numRuns: 100 },
    );
  });

  it("rejects a missing options object", () => {
    expect(() => defineTool(undefined as never)).toThrow(ToolDefinitionError);
  });

  it("rejects a non-string description and a non-function execute", () => {
    expect(definitionError(() => defineTool({ ...base, name: "t", description: 5 as never })).message).toContain("description must be a string");
    expect(definitionError(() => defineTool({ ...base, name: "t", execute: "run" as never })).message).toContain("execute must be a function");
  });

  it("requires exactly one of parameters and jsonSchema", () => {
    const both = definitionError(() =>
      defineTool({ name: "t", description: "", parameters: z.object({}), jsonSchema: { type: "object" }, execute: noop } as never),
    );
    expect(both.message).toContain("not both");
    const neither = definitionError(() => defineTool({ name: "t", description: "", execute: noop } as never));
    expect(neither.message).toContain("required");
  });

  it("accepts name and arg-matched prerequisites, rejects malformed ones", () => {
    const t = defineTool({ ...base, name: "write", prerequisites: ["read", { tool: "stat" }, { tool: "read", args: { path: "$path" } }] });
    expect(t.prerequisites).toEqual(["read", { tool: "stat" }, { tool: "read", args: { path: "$path" } }]);
    for (const bad of [{ name: "read" }, { tool: 3 }, { tool: "read", args: "x" }, { tool: "read", args: [] }, 7, null]) {
      const e = definitionError(() => defineTool({ ...base, name: "write", prerequisites: [bad as never] }));
      expect(e.message).toContain("invalid prerequisite");
    }
  });

  it("copies the prerequisites list", () => {
    const list = ["a"];
    const t = defineTool({ ...base, name: "t", prerequisites: list });
    list.push("b");
    expect(t.prerequisites).toEqual(["a"]);
  });
});

describe("execute", () => {
  it("runs sync and async implementations with the context", async () => {
    const sync = defineTool({ name: "add", description: "", parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
    expect(sync.execute({ a: 2, b: 3 }, ctx)).toBe(5);
    const seen: ToolExecuteContext[] = [];
    const asyncTool = defineTool({
      name: "echo",
      description: "",
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }, c) => {
        seen.push(c);
        await Promise.resolve();
        return text.toUpperCase();
      },
    });
    await expect(asyncTool.execute({ text: "hi" }, ctx)).resolves.toBe("HI");
    expect(seen).toEqual([ctx]);
  });

  it("lets a throwing implementation throw", async () => {
    const boom = defineTool({ name: "boom", description: "", jsonSchema: { type: "object" }, execute: async () => Promise.reject(new Error("kaput")) });
    await expect(boom.execute({}, ctx)).rejects.toThrow("kaput");
  });
});

describe("formatArgIssues / prerequisiteName", () => {
  it("lists each issue under the tool name", () => {
    expect(
      formatArgIssues("get_weather", [
        { path: "city", message: "expected string" },
        { path: "(root)", message: "bad" },
      ]),
    ).toBe('Invalid arguments for "get_weather":\n- city: expected string\n- (root): bad');
  });

  it("formats the issues validateArgs produced", () => {
    const t = defineTool({ name: "t", description: "", parameters: z.object({ n: z.number() }), execute: noop });
    const r = t.validateArgs({ n: "1" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(formatArgIssues("t", r.issues)).toMatch(/^Invalid arguments for "t":\n- n: .+/);
  });

  it("names a prerequisite in either form", () => {
    expect(prerequisiteName("read")).toBe("read");
    expect(prerequisiteName({ tool: "read", args: { path: "$path" } })).toBe("read");
  });
});

describe("defineTool hardening", () => {
  it("a function (or other non-JSON value) inside jsonSchema is a ToolDefinitionError naming where", () => {
    const make = (jsonSchema: Record<string, unknown>) => () => defineTool({ name: "t", description: "", jsonSchema, execute: () => 1 });
    expect(make({ type: "object", properties: { a: { type: "string", default: () => "x" } } })).toThrow(ToolDefinitionError);
    expect(make({ type: "object", properties: { a: { type: "string", default: () => "x" } } })).toThrow(/function at properties\.a\.default/);
    expect(make({ type: "object", properties: { a: { type: "integer", maximum: 10n } } })).toThrow(/bigint/);
  });

  it("timeoutMs is kept on the definition and validated", () => {
    expect(defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => 1, timeoutMs: 250 }).timeoutMs).toBe(250);
    expect(defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => 1 }).timeoutMs).toBeUndefined();
    expect(() => defineTool({ name: "t", description: "", parameters: z.object({}), execute: () => 1, timeoutMs: -5 })).toThrow(/timeoutMs/);
  });

  it("a validator that throws reports an issue instead (recursive $ref on 20,000-deep args)", () => {
    const node = { type: "object", properties: { a: { $ref: "#/$defs/node" } } };
    const tree = defineTool({ name: "tree", description: "", jsonSchema: { ...node, $defs: { node } }, execute: () => 1 });
    const deep = JSON.parse('{"a":'.repeat(20_000) + "{}" + "}".repeat(20_000));
    expect(tree.validateArgs(deep)).toMatchObject({ ok: false, issues: [{ path: "(root)", message: expect.stringMatching(/nested too deeply/) }] });
    const refined = defineTool({
      name: "r",
      description: "",
      parameters: z.object({ a: z.string() }).refine(() => {
        throw new TypeError("refinement bug");
      }),
      execute: () => 1,
    });
    expect(refined.validateArgs({ a: "x" })).toMatchObject({ ok: false, issues: [{ message: expect.stringMatching(/TypeError: refinement bug/) }] });
  });
});
