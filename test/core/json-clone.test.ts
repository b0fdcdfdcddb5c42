import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cloneJson } from "../../src/core/json-clone.js";

function sharesObject(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null) return false;
  if (a === b) return true;
  return Object.keys(a).some((k) => sharesObject((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

describe("cloneJson", () => {
  it("property: a plain JSON value comes back equal to structuredClone's copy, sharing no object", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = cloneJson(value);
        expect(copy).toStrictEqual(structuredClone(value));
        expect(sharesObject(value, copy)).toBe(false);
      }),
    );
  });

  it('keeps an own "__proto__" key an own property, and holes holes', () => {
    const parsed = JSON.parse('{"__proto__": {"x": 1}, "a": [1, 2]}') as Record<string, unknown>;
    const copy = cloneJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(copy).toStrictEqual(structuredClone(parsed));
    // eslint-disable-next-line no-sparse-arrays
    const sparse = cloneJson([1, , 3]);
    expect(1 in sparse).toBe(false);
    expect(sparse).toHaveLength(3);
  });

  it("leaves what is not plain JSON to structuredClone (class instances, cycles, depth), which also refuses functions", () => {
    const date = new Date(0);
    expect(cloneJson({ when: date }).when).toBeInstanceOf(Date);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const copy = cloneJson(cycle);
    expect(copy.self).toBe(copy);
    let deep: unknown = 0;
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(cloneJson(deep)).toStrictEqual(deep);
    expect(() => cloneJson({ f: () => 1 })).toThrow();
    expect(cloneJson({ big: 1n }).big).toBe(1n);
  });
});
