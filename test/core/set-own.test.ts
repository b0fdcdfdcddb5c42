import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cloneJson } from "../../src/core/json-clone.js";
import { assignOwn, setOwn } from "../../src/core/set-own.js";

describe("setOwn / assignOwn", () => {
  it.each(["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"])("%s becomes an own data key; the prototype stays Object.prototype", (key) => {
    const obj: Record<string, unknown> = { a: 1 };
    setOwn(obj, key, { polluted: true });
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect(Object.keys(obj)).toEqual(["a", key]);
    expect(Object.getOwnPropertyDescriptor(obj, key)).toEqual({ value: { polluted: true }, enumerable: true, writable: true, configurable: true });
    expect(JSON.parse(JSON.stringify(obj))).toEqual(JSON.parse(`{"a": 1, ${JSON.stringify(key)}: {"polluted": true}}`));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("a second setOwn replaces the value, as assignment would", () => {
    const obj: Record<string, number> = {};
    setOwn(obj, "__proto__", 1);
    setOwn(obj, "__proto__", 2);
    expect(Object.getOwnPropertyDescriptor(obj, "__proto__")?.value).toBe(2);
    expect(Object.keys(obj)).toEqual(["__proto__"]);
  });

  it("assignOwn copies every own key of JSON.parse output, where Object.assign would swap the prototype", () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1, "x": 2}') as Record<string, unknown>;
    const assigned = Object.assign({}, source) as Record<string, unknown>;
    expect(Object.getPrototypeOf(assigned)).not.toBe(Object.prototype); // the hazard
    const target: Record<string, unknown> = {};
    assignOwn(target, source);
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(target).toEqual(source);
  });

  it("property: an object built with setOwn from any entries equals Object.fromEntries of them", () => {
    const key = fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "valueOf"), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, fc.integer())), (entries) => {
        const obj: Record<string, number> = {};
        for (const [k, v] of entries) setOwn(obj, k, v);
        expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
        expect(obj).toEqual(Object.fromEntries(entries));
        expect(cloneJson(obj)).toEqual(obj);
      }),
      { seed: 20260611 },
    );
  });
});
